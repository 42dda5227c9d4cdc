package bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;
import org.openjdk.jmh.infra.Blackhole;

/** Benchmarks fast enough that JMH prints their scores as "≈ 0" or "≈ 10⁻ⁿ" in the chosen unit. */
@State(Scope.Thread)
@Warmup(iterations = 1, time = 200, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 3, time = 200, timeUnit = TimeUnit.MILLISECONDS)
@Fork(1)
public class TinyBench {
    @Param({"1", "16"})
    public int size;

    private int[] data;

    @Setup
    public void setup() {
        data = new int[size];
        for (int i = 0; i < size; i++) data[i] = i * 31;
    }

    @Benchmark
    public void empty() {
    }

    @Benchmark
    public int sum() {
        int s = 0;
        for (int v : data) s += v;
        return s;
    }

    @Benchmark
    public void consume(Blackhole bh) {
        bh.consume(data);
    }
}
