// Our Go benchmarks for tests/corpus/go-bench: b.SetBytes (MB/s), sub-benchmarks with key=value names, a
// benchmark that logs (its results then follow its log lines), and b.ReportMetric. Stdlib only.
package hashing

import (
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"testing"
)

func BenchmarkSum(b *testing.B) {
	for _, size := range []int{64, 4096} {
		data := make([]byte, size)
		b.Run(fmt.Sprintf("algo=sha256/size=%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				sha256.Sum256(data)
			}
		})
		b.Run(fmt.Sprintf("algo=crc32/size=%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				crc32.ChecksumIEEE(data)
			}
		})
	}
}

func BenchmarkLogs(b *testing.B) {
	b.Logf("N=%d", b.N)
	s := 0
	for i := 0; i < b.N; i++ {
		s += i
	}
	b.ReportMetric(float64(s%7), "leftover")
}
