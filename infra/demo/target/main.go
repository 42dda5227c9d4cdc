// Command benchtrail-demo-target is the HTTP target used by Benchtrail's tests and demo benches.
// It uses the standard library only so that it builds offline, and it is fast enough that the
// load generator, not the target, is the bottleneck on a small machine (a Python server would not be).
package main

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18080", "listen address (loopback by default)")
	slow := flag.Duration("slow", 5*time.Millisecond, "delay of /slow")
	upstream := flag.String("upstream", "", "consumer mode: GET /echo calls <upstream>/echo per request "+
		"(the PTS seeds' consumer -> provider pair)")
	trace := flag.String("trace", "", "instrument every request and export spans (OTLP/HTTP JSON) to this base URL")
	service := flag.String("service", "demo-target", "service.name of the exported spans")
	profiling := flag.Bool("pprof", false, "serve Go's CPU and heap profiles at /debug/pprof/ (net/http/pprof), "+
		"for a plan's `profile: {runtime: go}`")
	router := flag.String("router", "", "router mode: ordered-v1, ordered-v2 or radixtree over 10,000 routes per table "+
		"(the Easegress router benchmark; see router.go)")
	flag.Parse()
	var err error
	var tr *tracer
	if *trace != "" {
		tr = newTracer(*trace, *service)
	}
	client := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 0}}

	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		d := *slow
		// ?ms= lets a bench pick a service time without restarting the target.
		if v := r.URL.Query().Get("ms"); v != "" {
			if ms, err := strconv.Atoi(v); err == nil && ms >= 0 && ms <= 60000 {
				d = time.Duration(ms) * time.Millisecond
			}
		}
		time.Sleep(d)
		io.WriteString(w, "slow\n")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		if *upstream != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			relay(w, r, client, strings.TrimRight(*upstream, "/")+"/echo?"+r.URL.RawQuery, tr)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			io.WriteString(w, r.URL.RawQuery)
			return
		}
		io.Copy(w, io.LimitReader(r.Body, 16<<20))
	})
	// /static/<md5> and /users/<name>/<i> mirror the path shapes of the Easegress router benchmark
	// (exact, prefix and regexp routes).
	mux.HandleFunc("/static/", func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, "/static/")
		if len(key) != 32 {
			http.Error(w, "expected /static/<32 hex md5>", http.StatusNotFound)
			return
		}
		if _, err := hex.DecodeString(key); err != nil {
			http.Error(w, "expected /static/<32 hex md5>", http.StatusNotFound)
			return
		}
		sum := md5.Sum([]byte(key))
		fmt.Fprintf(w, "%s %s\n", key, hex.EncodeToString(sum[:]))
	})
	mux.HandleFunc("/users/", func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/users/"), "/"), "/")
		if len(parts) != 2 || parts[0] == "" {
			http.Error(w, "expected /users/<name>/<i>", http.StatusNotFound)
			return
		}
		i, err := strconv.Atoi(parts[1])
		if err != nil {
			http.Error(w, "expected /users/<name>/<i>", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"name": parts[0], "i": i})
	})
	// An OTLP/HTTP trace receiver (the OpenTelemetry agent's exporter in the demo sends here):
	// POST /v1/traces decodes each export request and counts its spans; GET /v1/traces/stats
	// tells how many requests, spans and bytes arrived.
	sink := &traceSink{}
	mux.HandleFunc("/v1/traces", sink.receive)
	mux.HandleFunc("/v1/traces/stats", sink.stats)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>target</title><h1 id="h">target</h1>`+
			`<button id="b" onclick="document.getElementById('h').textContent='clicked'">click</button>`)
	})

	if *profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	}

	var handler http.Handler = mux
	if *router != "" {
		if handler, err = newRouter(*router); err != nil {
			log.Fatal(err)
		}
	}
	if tr != nil {
		handler = tr.middleware(handler)
	}
	srv := &http.Server{Addr: *addr, Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		srv.Close()
	}()
	log.Printf("benchtrail-demo-target listening on %s", *addr)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

// relay is the consumer's call to its provider; with tracing on it is a client span whose
// traceparent the provider continues.
func relay(w http.ResponseWriter, r *http.Request, client *http.Client, url string, tr *tracer) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, url, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	start := time.Now()
	var traceID, spanID, parentID string
	if tr != nil {
		if p := strings.Split(r.Header.Get("traceparent"), "-"); len(p) == 4 {
			traceID, parentID = p[1], p[2]
		}
		spanID = randomHex(8)
		req.Header.Set("traceparent", "00-"+traceID+"-"+spanID+"-01")
	}
	resp, err := client.Do(req)
	if err != nil {
		http.Error(w, "upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
	if tr != nil {
		tr.record(traceID, spanID, parentID, "GET /echo (upstream)", 3, start, map[string]string{"http.url": url})
	}
}
