// Our Google Benchmark program for tests/corpus/google-benchmark: arguments, named arguments, threads, every
// time unit, items/bytes rates and a user counter. Built with Debian's libbenchmark-dev by produce.sh.
#include <benchmark/benchmark.h>

#include <numeric>
#include <string>
#include <vector>

static void BM_Sum(benchmark::State& state) {
  std::vector<int> v(state.range(0));
  std::iota(v.begin(), v.end(), 0);
  for (auto _ : state) {
    benchmark::DoNotOptimize(std::accumulate(v.begin(), v.end(), 0L));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * state.range(0) * sizeof(int));
}
BENCHMARK(BM_Sum)->Arg(8)->Arg(512);

static void BM_Concat(benchmark::State& state) {
  for (auto _ : state) {
    std::string s;
    for (int i = 0; i < state.range(0); ++i) s += "x";
    benchmark::DoNotOptimize(s);
  }
  state.counters["chars"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_Concat)->ArgName("len")->Arg(16)->Arg(64);

static void BM_Shared(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(state.thread_index());
}
BENCHMARK(BM_Shared)->Threads(1)->Threads(2);

static void BM_Micro(benchmark::State& state) { for (auto _ : state) benchmark::ClobberMemory(); }
BENCHMARK(BM_Micro)->Unit(benchmark::kMicrosecond);
static void BM_Milli(benchmark::State& state) {
  for (auto _ : state) { std::vector<int> v(20000, 1); benchmark::DoNotOptimize(v.data()); }
}
BENCHMARK(BM_Milli)->Unit(benchmark::kMillisecond);
static void BM_Seconds(benchmark::State& state) {
  for (auto _ : state) { std::vector<int> v(2000, 1); benchmark::DoNotOptimize(v.data()); }
}
BENCHMARK(BM_Seconds)->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
