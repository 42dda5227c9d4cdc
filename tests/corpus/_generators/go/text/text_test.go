package text

import (
	"strings"
	"testing"
)

// BenchmarkSum has the same name as hashing's: a file of both packages names each with its package.
func BenchmarkSum(b *testing.B) {
	parts := []string{"a", "b", "c", "d"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = strings.Join(parts, ",")
	}
}

func BenchmarkBuilder(b *testing.B) {
	for _, n := range []int{8, 256} {
		b.Run(strings.Repeat("x", 1)+"/parts="+string(rune('0'+n%10)), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var sb strings.Builder
				for j := 0; j < n; j++ {
					sb.WriteString("ab")
				}
				_ = sb.String()
			}
			b.ReportMetric(float64(n*2), "bytes/op")
		})
	}
}
