// Benchmarks of the OpenTelemetry Go trace SDK: starting and ending a span, with and without a recording
// exporter. Run against several released versions of go.opentelemetry.io/otel/sdk by ../produce.sh; the
// outputs are the Go benchmark history in ../results (Benchtrail's example of `go test -bench`).
package otelbench

import (
	"context"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// countingExporter records how many spans were exported and keeps none, so memory stays flat however
// many iterations the benchmark runs.
type countingExporter struct{ spans atomic.Int64 }

func (e *countingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.spans.Add(int64(len(spans)))
	return nil
}

func (e *countingExporter) Shutdown(context.Context) error { return nil }

func BenchmarkSpan(b *testing.B) {
	cases := []struct {
		name string
		opts func() []sdktrace.TracerProviderOption
	}{
		{"sampled=false", func() []sdktrace.TracerProviderOption {
			return []sdktrace.TracerProviderOption{sdktrace.WithSampler(sdktrace.NeverSample())}
		}},
		{"exporter=none", func() []sdktrace.TracerProviderOption { return nil }},
		{"exporter=recording", func() []sdktrace.TracerProviderOption {
			return []sdktrace.TracerProviderOption{sdktrace.WithSyncer(&countingExporter{})}
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(tc.opts()...)
			defer func() { _ = tp.Shutdown(context.Background()) }()
			tracer := tp.Tracer("benchtrail.example/otelbench")
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, span := tracer.Start(ctx, "operation")
				span.SetAttributes(attribute.Int("iteration", i), attribute.String("kind", "bench"))
				span.End()
			}
			b.StopTimer()
			// A custom metric (b.ReportMetric): spans started per second of benchmark time.
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}
