// Command rawtcp is the ceiling of the line-framed rows (stdio and TCP): it
// reads newline-terminated lines and answers each with one FIXED prebuilt
// reply line (bench/internal/rawreply: mcpwire's echo reply), doing no parsing,
// validation or dispatch. Replies to the lines that arrived together are
// written together (one write per batch of buffered input), so the number is
// what plain line I/O costs on this machine.
//
// With -splice-id (what bench/compare.sh uses) the reply's id is the
// request's id token, found with one byte search for `"id":` — still no JSON
// parsing — because the load generator matches replies to requests by id on
// line transports; the reply then has exactly the size of mcpwire's reply to
// the same request.
//
//	rawtcp -tcp 127.0.0.1:PORT   one reader/writer loop per accepted connection
//	rawtcp                       stdin → stdout (exits at EOF)
//
// SIGUSR1 writes a stats line to stderr (see bench/internal/procstats).
package main

import (
	"bufio"
	"errors"
	"flag"
	"io"
	"log"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/mcpwire/mcpwire/bench/internal/procstats"
	"github.com/mcpwire/mcpwire/bench/internal/rawreply"
)

// spliceID, when set, copies the request's id token into the reply instead of
// the fixed 1 (one bytes.Index per line, still no JSON parsing), for load
// generators that correlate replies by id.
var spliceID bool

func main() {
	addr := flag.String("tcp", "", "listen on this TCP address; stdin/stdout when empty")
	flag.BoolVar(&spliceID, "splice-id", false, "copy each request's id into its reply (no parsing: first \"id\": token)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("rawtcp: ")
	procstats.OnSignal()
	if *addr == "" {
		if err := serve(os.Stdin, os.Stdout); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			defer c.Close()
			_ = serve(c, c)
		}()
	}
}

// yieldEvery is how often a busy serve loop yields before its next blocking
// read. A goroutine that only ever blocks in read(2) is never rescheduled,
// so Go's monitor thread finds it on its P at every check, preempts it past
// 10 ms and then polls every 20 µs for a while. mcpwire's stdio reader and
// its load generator yield the same way (transport/stdio, internal/load);
// the ceiling gets the same remedy, so that it stays the ceiling.
const yieldEvery = 5 * time.Millisecond

// serve answers every line read from r with the reply on w until EOF. Output
// is flushed whenever no further input is already buffered.
func serve(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, 64<<10)
	out := bufio.NewWriterSize(w, 64<<10)
	fixed := []byte(rawreply.Line)
	yielded := time.Now()
	for {
		line, err := in.ReadSlice('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			if spliceID {
				writeSpliced(out, line)
			} else {
				out.Write(fixed)
			}
		}
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				// An over-long line: skip to its end without answering.
				for errors.Is(err, bufio.ErrBufferFull) {
					_, err = in.ReadSlice('\n')
				}
				if err == nil {
					continue
				}
			}
			out.Flush()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if in.Buffered() == 0 {
			if err := out.Flush(); err != nil {
				return err
			}
			if now := time.Now(); now.Sub(yielded) >= yieldEvery {
				yielded = now
				runtime.Gosched()
			}
		}
	}
}

func writeSpliced(out *bufio.Writer, line []byte) {
	id, ok := rawreply.ID(line)
	if !ok {
		out.WriteString(rawreply.Line)
		return
	}
	out.Write(rawreply.Head)
	out.Write(id)
	out.Write(rawreply.Tail)
}
