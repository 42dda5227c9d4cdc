package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// field encodes a length-delimited protobuf field (wire type 2) by hand.
func field(num int, payload []byte) []byte {
	out := []byte{byte(num<<3 | 2)}
	n := len(payload)
	for n >= 0x80 {
		out = append(out, byte(n)|0x80)
		n >>= 7
	}
	out = append(out, byte(n))
	return append(out, payload...)
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func span(name string) []byte {
	traceID := bytes.Repeat([]byte{7}, 16)
	// trace_id = 1, name = 5, start_time_unix_nano = 7 (fixed64)
	return concat(field(1, traceID), field(5, []byte(name)), []byte{7<<3 | 1, 1, 2, 3, 4, 5, 6, 7, 8})
}

func request() []byte {
	scopeA := concat(field(1, field(1, []byte("demo"))), field(2, span("a")), field(2, span("b")), field(2, span("c")))
	scopeB := concat(field(1, nil), field(2, span("d")), field(2, span("e")))
	// resource: attributes with a varint field inside (dropped_attributes_count = 2)
	resource := field(1, concat(field(1, []byte("service.name")), []byte{2 << 3, 5}))
	return concat(field(1, concat(resource, field(2, scopeA), field(2, scopeB))), field(1, field(2, field(2, span("f")))))
}

func TestCountProtoSpans(t *testing.T) {
	n, err := countProtoSpans(request())
	if err != nil || n != 6 { // 3 + 2 in the first ResourceSpans, 1 in the second
		t.Fatalf("got %d spans, err %v; want 6", n, err)
	}
	if _, err := countProtoSpans(request()[:20]); err == nil {
		t.Fatal("a truncated message was accepted")
	}
}

func TestReceiverCountsAndRejects(t *testing.T) {
	sink := &traceSink{}
	for _, tc := range []struct {
		ctype, body string
		status      int
	}{
		{"application/x-protobuf", string(request()), 200},
		{"application/json", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x"},{"name":"y"}]}]}]}`, 200},
		{"application/x-protobuf", string(request()[:9]), 400},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/traces", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", tc.ctype)
		sink.receive(rec, req)
		if rec.Code != tc.status {
			t.Fatalf("%s: status %d, want %d", tc.ctype, rec.Code, tc.status)
		}
	}
	if sink.requests.Load() != 2 || sink.spans.Load() != 8 || sink.rejected.Load() != 1 {
		t.Fatalf("requests %d spans %d rejected %d; want 2, 8, 1", sink.requests.Load(), sink.spans.Load(), sink.rejected.Load())
	}
}
