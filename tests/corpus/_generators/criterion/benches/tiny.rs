use benchtrail_criterion_gen::fib;
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn benches(c: &mut Criterion) {
    c.bench_function("fib 15", |b| b.iter(|| fib(black_box(15))));
    let mut group = c.benchmark_group("sum");
    for size in [16u64, 1024] {
        let data: Vec<u64> = (0..size).collect();
        group.throughput(Throughput::Elements(size));
        group.bench_with_input(BenchmarkId::from_parameter(size), &data, |b, d| {
            b.iter(|| d.iter().sum::<u64>())
        });
    }
    group.finish();
    let mut flat = c.benchmark_group("flat");
    flat.sampling_mode(criterion::SamplingMode::Flat);
    flat.bench_function("fib 20", |b| b.iter(|| fib(black_box(20))));
    flat.finish();
}

criterion_group! {
    name = tiny;
    config = Criterion::default().sample_size(20).warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_millis(800));
    targets = benches
}
criterion_main!(tiny);
