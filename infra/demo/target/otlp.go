package main

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// traceSink counts what an OTLP/HTTP exporter sends: export requests, spans and body bytes.
type traceSink struct {
	requests, spans, bytes, rejected atomic.Int64
}

func (s *traceSink) receive(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST an ExportTraceServiceRequest", http.StatusMethodNotAllowed)
		return
	}
	var body io.Reader = io.LimitReader(r.Body, 64<<20)
	if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
		gz, err := gzip.NewReader(body)
		if err != nil {
			s.reject(w, fmt.Errorf("gzip: %w", err))
			return
		}
		defer gz.Close()
		body = gz
	}
	data, err := io.ReadAll(body)
	if err != nil {
		s.reject(w, err)
		return
	}
	var n int64
	isJSON := strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
	if isJSON {
		n, err = countJSONSpans(data)
	} else {
		n, err = countProtoSpans(data)
	}
	if err != nil {
		s.reject(w, err)
		return
	}
	s.requests.Add(1)
	s.spans.Add(n)
	s.bytes.Add(int64(len(data)))
	if isJSON {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
		return
	}
	// An empty ExportTraceServiceResponse: everything accepted.
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func (s *traceSink) reject(w http.ResponseWriter, err error) {
	s.rejected.Add(1)
	http.Error(w, "not an OTLP trace export: "+err.Error(), http.StatusBadRequest)
}

func (s *traceSink) stats(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]int64{
		"requests": s.requests.Load(), "spans": s.spans.Load(), "bytes": s.bytes.Load(),
		"rejected": s.rejected.Load(),
	})
}

func countJSONSpans(data []byte) (int64, error) {
	var req struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []json.RawMessage `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	if err := json.Unmarshal(data, &req); err != nil {
		return 0, err
	}
	var n int64
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			n += int64(len(ss.Spans))
		}
	}
	return n, nil
}

// countProtoSpans walks the protobuf wire format of an ExportTraceServiceRequest:
// resource_spans = 1 -> ResourceSpans.scope_spans = 2 -> ScopeSpans.spans = 2.
func countProtoSpans(data []byte) (int64, error) {
	var n int64
	err := eachField(data, func(field int, value []byte) error {
		if field != 1 {
			return nil
		}
		return eachField(value, func(field int, value []byte) error {
			if field != 2 {
				return nil
			}
			return eachField(value, func(field int, _ []byte) error {
				if field == 2 {
					n++
				}
				return nil
			})
		})
	})
	return n, err
}

var errTruncated = errors.New("truncated protobuf message")

// eachField calls fn for every field of a protobuf message; value is the payload of
// length-delimited fields and nil for the others.
func eachField(data []byte, fn func(field int, value []byte) error) error {
	for i := 0; i < len(data); {
		key, k := varint(data[i:])
		if k == 0 {
			return errTruncated
		}
		i += k
		field := int(key >> 3)
		switch key & 7 {
		case 0:
			_, k := varint(data[i:])
			if k == 0 {
				return errTruncated
			}
			i += k
		case 1:
			i += 8
		case 5:
			i += 4
		case 2:
			length, k := varint(data[i:])
			if k == 0 || uint64(len(data)-i-k) < length {
				return errTruncated
			}
			i += k
			if err := fn(field, data[i:i+int(length)]); err != nil {
				return err
			}
			i += int(length)
			continue
		default:
			return fmt.Errorf("unsupported wire type %d", key&7)
		}
		if i > len(data) {
			return errTruncated
		}
		if err := fn(field, nil); err != nil {
			return err
		}
	}
	return nil
}

func varint(b []byte) (uint64, int) {
	var x uint64
	for i := 0; i < len(b) && i < 10; i++ {
		x |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}
