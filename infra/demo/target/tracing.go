package main

// The demo's Go "agent": Go has no runtime agent to attach (loongsuite-go-agent and
// opentelemetry-go-auto-instrumentation rewrite the program at compile time), so the demo target
// carries its own instrumentation, switched on with -trace: every request gets a server span, a
// relayed call a client span, the W3C traceparent is propagated to the upstream, and spans are
// batched and exported as OTLP/HTTP JSON (the work a tracing agent adds on the request path and in
// the background). Standard library only, so the target still builds offline.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

type otlpSpan struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId,omitempty"`
	Name         string `json:"name"`
	Kind         int    `json:"kind"`
	Start        string `json:"startTimeUnixNano"`
	End          string `json:"endTimeUnixNano"`
	Attributes   []attr `json:"attributes"`
}

type attr struct {
	Key   string            `json:"key"`
	Value map[string]string `json:"value"`
}

type tracer struct {
	url     string
	service string
	client  *http.Client
	mu      sync.Mutex
	batch   []otlpSpan
}

func newTracer(url, service string) *tracer {
	t := &tracer{url: strings.TrimRight(url, "/") + "/v1/traces", service: service,
		client: &http.Client{Timeout: 5 * time.Second}}
	go func() {
		for range time.Tick(time.Second) {
			t.flush()
		}
	}()
	return t
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// parent reads a W3C traceparent (00-<trace>-<span>-<flags>).
func parent(r *http.Request) (traceID, spanID string) {
	parts := strings.Split(r.Header.Get("traceparent"), "-")
	if len(parts) == 4 && len(parts[1]) == 32 && len(parts[2]) == 16 {
		return parts[1], parts[2]
	}
	return randomHex(16), ""
}

func (t *tracer) record(traceID, spanID, parentID, name string, kind int, start time.Time, attrs map[string]string) {
	s := otlpSpan{TraceID: traceID, SpanID: spanID, ParentSpanID: parentID, Name: name, Kind: kind,
		Start: strconv.FormatInt(start.UnixNano(), 10), End: strconv.FormatInt(time.Now().UnixNano(), 10)}
	for k, v := range attrs {
		s.Attributes = append(s.Attributes, attr{Key: k, Value: map[string]string{"stringValue": v}})
	}
	t.mu.Lock()
	t.batch = append(t.batch, s)
	full := len(t.batch) >= 512
	t.mu.Unlock()
	if full {
		go t.flush()
	}
}

func (t *tracer) flush() {
	t.mu.Lock()
	spans := t.batch
	t.batch = nil
	t.mu.Unlock()
	if len(spans) == 0 {
		return
	}
	body, _ := json.Marshal(map[string]any{"resourceSpans": []any{map[string]any{
		"resource": map[string]any{"attributes": []attr{
			{Key: "service.name", Value: map[string]string{"stringValue": t.service}}}},
		"scopeSpans": []any{map[string]any{"scope": map[string]string{"name": "benchtrail-demo-target"},
			"spans": spans}},
	}}})
	resp, err := t.client.Post(t.url, "application/json", bytes.NewReader(body))
	if err == nil {
		resp.Body.Close()
	}
}

// middleware wraps a handler with a server span per request; the span context travels in the
// request's traceparent header so a relayed call can carry it on.
func (t *tracer) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		traceID, parentID := parent(r)
		spanID := randomHex(8)
		r.Header.Set("traceparent", "00-"+traceID+"-"+spanID+"-01")
		next.ServeHTTP(w, r)
		t.record(traceID, spanID, parentID, r.Method+" "+r.URL.Path, 2, start,
			map[string]string{"http.method": r.Method, "http.target": r.URL.RequestURI()})
	})
}
