package framing_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpwire/mcpwire/framing"
)

func ExampleReader() {
	in := strings.NewReader("{\"id\":1}\r\n\n   \n" +
		"{\"id\":2,\"too\":\"long for the 20-byte limit\"}\n" +
		"{\"id\":3}") // no final newline
	r := framing.NewReader(in, framing.ReaderConfig{MaxLine: 20})
	defer r.Release()
	for {
		frame, err := r.Next()
		if errors.Is(err, framing.ErrLineTooLong) {
			fmt.Printf("rejected %q...\n", r.LastTooLong()[:8])
			continue // the reader has skipped that line
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println("read error:", err)
			return
		}
		// frame is only valid until the next call to Next.
		fmt.Printf("frame %s\n", frame)
	}
	fmt.Println("over-long lines:", r.TooLong())
	// Output:
	// frame {"id":1}
	// rejected "{\"id\":2,"...
	// frame {"id":3}
	// over-long lines: 1
}

func ExampleDecoder() {
	d := framing.NewDecoder(framing.ReaderConfig{})
	defer d.Release()
	// Chunks as an event loop would see them: the second frame straddles.
	for _, chunk := range []string{"{\"id\":1}\n{\"id\"", ":2}\n"} {
		d.Feed([]byte(chunk))
		for {
			frame, err := d.Next()
			if err != nil {
				fmt.Println("error:", err)
				continue
			}
			if frame == nil {
				break // need more input; the chunk may be reused now
			}
			fmt.Printf("frame %s\n", frame)
		}
	}
	// Output:
	// frame {"id":1}
	// frame {"id":2}
}

func ExampleWriter() {
	w := framing.NewWriter(os.Stdout, framing.WriterConfig{})
	_ = w.WriteFrame([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	// Fan-out: one frame from parts, without building it first.
	_ = w.WriteFrameParts([]byte(`{"jsonrpc":"2.0","id":`), []byte("2"), []byte(`,"result":{}}`))
	fmt.Println(w.WriteFrame([]byte("a\nb")))
	if err := w.Close(); err != nil {
		fmt.Println("close:", err)
	}
	fmt.Println(w.WriteFrame([]byte("{}")))
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{}}
	// {"jsonrpc":"2.0","id":2,"result":{}}
	// framing: frame contains a raw newline
	// framing: writer closed
}

func ExampleAcquireBuf() {
	buf := framing.AcquireBuf(1000)
	buf = append(buf, "hello"...)
	fmt.Println(len(buf), cap(buf) >= 1000)
	framing.ReleaseBuf(buf) // buf must not be used after this
	// Output: 5 true
}
