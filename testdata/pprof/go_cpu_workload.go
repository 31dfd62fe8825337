package main

import (
	"context"
	"crypto/sha256"
	"compress/gzip"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"sync"
	"time"
)

//go:noinline
func hashLoop(n int) byte {
	var b [32]byte
	for i := 0; i < n; i++ {
		b = sha256.Sum256(b[:])
	}
	return b[0]
}

func small(x int) int { return x*x + 1 } // inlined

func sortLoop(n int) int {
	s := make([]int, n)
	for i := range s {
		s[i] = small(n - i)
	}
	sort.Ints(s)
	return s[0]
}

func gz(n int) {
	w := gzip.NewWriter(io.Discard)
	buf := make([]byte, 1<<16)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for i := 0; i < n; i++ {
		w.Write(buf)
	}
	w.Close()
}

func main() {
	f, _ := os.Create(os.Args[1])
	pprof.StartCPUProfile(f)
	var wg sync.WaitGroup
	deadline := time.Now().Add(3 * time.Second)
	for _, job := range []string{"hash", "sort", "gzip"} {
		job := job
		wg.Add(1)
		go func() {
			defer wg.Done()
			pprof.Do(context.Background(), pprof.Labels("job", job, "host", "a;b c"), func(ctx context.Context) {
				for time.Now().Before(deadline) {
					switch job {
					case "hash":
						hashLoop(20000)
					case "sort":
						sortLoop(100000)
					case "gzip":
						gz(20)
					}
				}
			})
		}()
	}
	wg.Wait()
	pprof.StopCPUProfile()
	f.Close()
}
