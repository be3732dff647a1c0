// Command rawsse is the ceiling of the fan-out comparison: a minimal
// hand-written HTTP/1.1 server on plain net, no MCP library and no
// validation. It accepts POSTs on any path (the harness uses /mcp):
//
//   - a body whose method is subscriptions/listen gets an SSE response
//     (chunked) that stays open: the acknowledgement event is sent at once,
//     and the stream's notifications/resources/updated event is built then,
//     once, for its whole life;
//   - any other request (the publisher's tools/call of touch) writes that
//     prebuilt event to every open stream — one write per stream, the streams
//     split across GOMAXPROCS goroutines — and is then answered with a small
//     JSON result. A touch whose uri is a sub-resource of a stream's
//     subscribed URI (`mcpwire load -unique-uris`: URI/k) is framed per
//     publish instead: the stream's prebuilt head (id and all), the touched
//     URI, one chunk, one write per matching stream; nothing is queued or
//     collapsed, the touch is answered once every stream has been written;
//   - server/discover and tools/list get fixed minimal results, for
//     generators that probe or read the touch tool's schema first.
//
// The only JSON decoding happens once per listen request (its id and URIs, so
// each stream's events carry its own subscriptionId); touch calls are
// recognised and answered with byte searches.
//
//	rawsse -addr 127.0.0.1:PORT
//
// SIGUSR1 writes a stats line to stderr (see bench/internal/procstats).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log"
	"net"
	"runtime"
	"strconv"
	"sync"

	"github.com/mcpwire/mcpwire/bench/internal/procstats"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18086", "listen address")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("rawsse: ")
	procstats.OnSignal()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serveConn(c)
	}
}

// stream is one open listen response.
type stream struct {
	c     net.Conn
	event []byte // the whole chunk: size line, SSE event, CRLF
	head  []byte // the update up to and including `"uri":`, for other URIs
	sub   string // the subscribed URI
	idx   int    // position in hub.list
}

var hub struct {
	mu   sync.RWMutex
	list []*stream
}

func removeStream(s *stream) {
	hub.mu.Lock()
	last := len(hub.list) - 1
	hub.list[s.idx] = hub.list[last]
	hub.list[s.idx].idx = s.idx
	hub.list[last] = nil
	hub.list = hub.list[:last]
	hub.mu.Unlock()
}

// fanOut writes the update of uri to every stream subscribed to it (or to
// a parent of it), each delivery its own write; uri nil or equal to the
// subscribed URI sends the stream's prebuilt event.
func fanOut(uri []byte) {
	hub.mu.RLock()
	defer hub.mu.RUnlock()
	n := len(hub.list)
	shards := runtime.GOMAXPROCS(0)
	if n < 64 || shards < 2 {
		writeAll(hub.list, uri)
		return
	}
	var wg sync.WaitGroup
	per := (n + shards - 1) / shards
	for lo := 0; lo < n; lo += per {
		part := hub.list[lo:min(lo+per, n)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			writeAll(part, uri)
		}()
	}
	wg.Wait()
}

func writeAll(list []*stream, uri []byte) {
	var buf []byte
	for _, s := range list {
		if uri == nil || string(uri) == s.sub {
			_, _ = s.c.Write(s.event) // a failed stream is dropped by its reader
			continue
		}
		if !under(uri, s.sub) {
			continue
		}
		buf = appendUpdate(buf[:0], s.head, uri)
		_, _ = s.c.Write(buf)
	}
}

// under reports whether uri is a sub-resource of sub (SUB-06).
func under(uri []byte, sub string) bool {
	return len(uri) > len(sub) && string(uri[:len(sub)]) == sub && (sub[len(sub)-1] == '/' || uri[len(sub)] == '/')
}

// appendUpdate appends one chunk: the SSE event of head + "uri" + "}}".
// The touched URI is taken as the JSON string body it arrived as.
func appendUpdate(dst, head, uri []byte) []byte {
	evLen := len("event: message\ndata: ") + len(head) + len(uri) + 2 + len("}}") + len("\n\n")
	dst = strconv.AppendInt(dst, int64(evLen), 16)
	dst = append(dst, "\r\nevent: message\ndata: "...)
	dst = append(dst, head...)
	dst = append(dst, '"')
	dst = append(dst, uri...)
	dst = append(dst, `"}}`...)
	return append(dst, "\n\n\r\n"...)
}

var (
	sseHead = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n" +
		"X-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n")
	idKey       = []byte(`"id":`)
	listenKey   = []byte(`"subscriptions/listen"`)
	discoverKey = []byte(`"server/discover"`)
	toolsKey    = []byte(`"tools/list"`)
	clKey       = []byte("content-length:")
	uriKey      = []byte(`"uri":"`)
)

const discoverResult = `{"resultType":"complete","supportedVersions":["2026-07-28"],` +
	`"capabilities":{"tools":{},"resources":{"subscribe":true}},"ttlMs":0,"cacheScope":"private"}`

const toolsResult = `{"resultType":"complete","tools":[{"name":"touch","inputSchema":{"type":"object",` +
	`"properties":{"uri":{"type":"string"}},"required":["uri"]}}]}`

const touchResult = `{"resultType":"complete","content":[{"type":"text","text":"updated"}],"isError":false}`

func serveConn(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 4<<10)
	var body, out []byte
	for {
		n, ok := readHead(r)
		if !ok {
			return
		}
		if cap(body) < n {
			body = make([]byte, n)
		}
		body = body[:n]
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if bytes.Contains(body, listenKey) {
			// r and its buffer are dead from here on: an open stream keeps
			// only its goroutine, its prebuilt event and a 1-byte read.
			listen(c, body)
			return
		}
		var result string
		switch {
		case bytes.Contains(body, discoverKey):
			result = discoverResult
		case bytes.Contains(body, toolsKey):
			result = toolsResult // the generator's preflight reads the tool's schema
		default:
			fanOut(touchedURI(body))
			result = touchResult
		}
		out = appendJSONReply(out[:0], idToken(body), result)
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// readHead consumes a request head and returns its Content-Length.
func readHead(r *bufio.Reader) (int, bool) {
	n := 0
	first := true
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return 0, false
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if first {
				continue // tolerate a stray CRLF between requests
			}
			return n, true
		}
		first = false
		if len(line) > len(clKey) && bytes.EqualFold(line[:len(clKey)], clKey) {
			v, err := strconv.Atoi(string(bytes.TrimSpace(line[len(clKey):])))
			if err != nil || v < 0 || v > 1<<20 {
				return 0, false
			}
			n = v
		}
	}
}

// touchedURI is the touch's uri argument as it appears between its quotes
// (no unescaping: the generator's URIs have no escapes), nil if absent.
func touchedURI(body []byte) []byte {
	i := bytes.Index(body, uriKey)
	if i < 0 {
		return nil
	}
	v := body[i+len(uriKey):]
	end := bytes.IndexByte(v, '"')
	if end <= 0 {
		return nil
	}
	return v[:end]
}

// idToken is the request's id as it appears on the wire (first "id": token).
func idToken(body []byte) []byte {
	i := bytes.Index(body, idKey)
	if i < 0 {
		return []byte("null")
	}
	tok := body[i+len(idKey):]
	if end := bytes.IndexAny(tok, ",}"); end >= 0 {
		return bytes.TrimSpace(tok[:end])
	}
	return []byte("null")
}

func appendJSONReply(out, id []byte, result string) []byte {
	bodyLen := len(`{"jsonrpc":"2.0","id":`) + len(id) + len(`,"result":`) + len(result) + 1
	out = append(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(bodyLen), 10)
	out = append(out, "\r\n\r\n"...)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"result":`...)
	out = append(out, result...)
	return append(out, '}')
}

// chunk frames one SSE event carrying msg as an HTTP/1.1 chunk.
func chunk(msg []byte) []byte {
	ev := make([]byte, 0, len(msg)+32)
	ev = append(ev, "event: message\ndata: "...)
	ev = append(ev, msg...)
	ev = append(ev, "\n\n"...)
	out := strconv.AppendInt(nil, int64(len(ev)), 16)
	out = append(out, "\r\n"...)
	out = append(out, ev...)
	return append(out, "\r\n"...)
}

func listen(c net.Conn, body []byte) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &req)
	if len(req.ID) == 0 {
		req.ID = json.RawMessage("null")
	}
	uris := req.Params.Notifications.ResourceSubscriptions
	urisJSON, _ := json.Marshal(uris)
	meta := `{"io.modelcontextprotocol/subscriptionId":` + string(req.ID) + `}`
	ack := `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":` + meta +
		`,"notifications":{"resourceSubscriptions":` + string(urisJSON) + `}}}`
	uri := "test://load"
	if len(uris) > 0 {
		uri = uris[0]
	}
	uriJSON, _ := json.Marshal(uri)
	head := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":` + meta + `,"uri":`
	upd := head + string(uriJSON) + `}}`
	first := append(append([]byte(nil), sseHead...), chunk([]byte(ack))...)
	s := &stream{c: c, event: chunk([]byte(upd)), head: []byte(head), sub: uri}
	// The acknowledgement is written and the stream joins under the hub's
	// lock, which a fan-out holds while it writes: a publish either comes
	// after both (and reaches the stream) or before the acknowledgement.
	// Joining after the write left a window in which a client that had
	// read its acknowledgement missed a publish (unique-URI rows, 5,000
	// streams, a loaded machine).
	hub.mu.Lock()
	_, err := c.Write(first)
	if err == nil {
		s.idx = len(hub.list)
		hub.list = append(hub.list, s)
	}
	hub.mu.Unlock()
	if err != nil {
		return
	}
	defer removeStream(s)
	// The client ends the subscription by closing the connection.
	var b [1]byte
	for {
		if _, err := c.Read(b[:]); err != nil {
			return
		}
	}
}
