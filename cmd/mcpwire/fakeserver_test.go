package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// This file is a stdio MCP server scripted for the CLI's tests, run by the
// test binary when MCPWIRE_TEST_SERVE_STDIO=script:MODE:DIR. Each start
// appends a line to DIR/spawns. Modes:
//
//	hostile    every string it sends carries terminal escape sequences
//	           and '<': server info, instructions, the names and
//	           descriptions of its tools, resources, templates and
//	           prompts (two to a page), progress messages, log messages,
//	           result text, error messages, a line that is not JSON-RPC,
//	           and its stderr
//	dieonce    the first process exits on its first message (the version
//	           probe); later ones are the reference server
//	crashcall  the first process exits on its first tools/call; later ones
//	           answer it
//	crashalways every process exits on its first tools/call
//	silent     reads and never answers
//	refuse     answers the version probe with a modern error (-32021)
//	           whose message carries escape sequences
//
// In every mode but dieonce and silent, the tool "hang" is never answered.

// evil is what the hostile server puts in every string: a screen clear,
// an OSC title change, a bell, a carriage return, a C1 CSI, a
// bidirectional override, and markup.
const evil = "A\x1b[2J\x1b]0;pwned\x07\r\u009b31m\u202e <b>&"

func scriptServer(spec string) int {
	mode, dir, _ := strings.Cut(spec, ":")
	f, err := os.OpenFile(filepath.Join(dir, "spawns"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		fmt.Fprintln(f, mode)
		f.Close()
	}
	first := false
	if _, err := os.Stat(filepath.Join(dir, "marker")); os.IsNotExist(err) {
		first = true
		_ = os.WriteFile(filepath.Join(dir, "marker"), nil, 0o600)
	}
	if mode == "dieonce" && !first {
		os.Args = []string{"mcpwire", "serve", "--stdio", "--log-level", "warn"}
		main()
		return 0
	}
	if mode == "hostile" {
		fmt.Fprintln(os.Stderr, "starting"+evil) // forwarded to the client's logger
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false) // '<' as it is, as most servers send it
	send := func(v any) {
		_ = enc.Encode(v)
		out.Flush()
	}
	for in.Scan() {
		if mode == "dieonce" {
			return 3
		}
		if mode == "silent" {
			continue
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name   string `json:"name"`
				Cursor string `json:"cursor"`
				Meta   struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		reply := func(result map[string]any) {
			result["resultType"] = "complete"
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		}
		fail := func(code int, msg string) {
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": code, "message": msg}})
		}
		name := func(s string) string {
			if mode == "hostile" {
				return s + evil
			}
			return s
		}
		// page answers a list two entries to a page, the cursor being the
		// index of the next entry.
		page := func(key string, entries []map[string]any) {
			i := 0
			fmt.Sscan(req.Params.Cursor, &i)
			res := map[string]any{key: entries[i:min(i+2, len(entries))]}
			if i+2 < len(entries) {
				res["nextCursor"] = fmt.Sprint(i + 2)
			}
			reply(res)
		}
		switch req.Method {
		case "server/discover":
			if mode == "refuse" {
				fail(-32021, "missing capabilities"+evil)
				continue
			}
			reply(map[string]any{
				"supportedVersions": []string{"2026-07-28"},
				"capabilities":      map[string]any{"tools": map[string]any{}, "resources": map[string]any{}, "prompts": map[string]any{}},
				"instructions":      name("instructions"),
				"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": name("scripted"), "version": name("1")}},
			})
		case "tools/list":
			var tools []map[string]any
			for _, n := range []string{"echo", "fail", "t3"} {
				tools = append(tools, map[string]any{"name": name(n), "description": name("does " + n), "inputSchema": map[string]any{"type": "object"}})
			}
			page("tools", tools)
		case "resources/list":
			page("resources", []map[string]any{
				{"uri": name("test://r1"), "name": name("r1"), "description": name("first")},
				{"uri": "test://r2", "name": "r2"},
				{"uri": "test://r3", "name": "r3"},
			})
		case "resources/templates/list":
			page("resourceTemplates", []map[string]any{{"uriTemplate": name("test://t/{id}"), "name": name("tmpl")}})
		case "prompts/list":
			page("prompts", []map[string]any{
				{"name": name("p1"), "description": name("a prompt")},
				{"name": "p2"}, {"name": "p3"}, {"name": "p4"}, {"name": "p5"},
			})
		case "tools/call":
			if (mode == "crashcall" && first) || mode == "crashalways" {
				return 3
			}
			if req.Params.Name == "hang" {
				continue
			}
			if strings.HasPrefix(req.Params.Name, "fail") {
				fail(-32603, name("it broke"))
				continue
			}
			if mode == "hostile" {
				fmt.Fprintln(out, "not JSON-RPC"+evil) // skipped by the client
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
					"params": map[string]any{"level": "info", "logger": name("log"), "data": name("logged")}})
			}
			if req.Params.Meta.Token != nil {
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
					"params": map[string]any{"progressToken": req.Params.Meta.Token, "progress": 1, "total": 2, "message": name("half")}})
			}
			reply(map[string]any{"content": []map[string]any{{"type": "text", "text": name("result") + " <ok>"}}})
		default:
			fail(-32601, "Method not found")
		}
	}
	return 0
}

// scriptTarget is a stdio target running the scripted server in mode,
// counting its starts in dir.
func scriptTarget(mode, dir string) string {
	return fmt.Sprintf("stdio:env -u MCPWIRE_TEST_MAIN MCPWIRE_TEST_SERVE_STDIO=script:%s:%s '%s'", mode, dir, os.Args[0])
}

// spawns returns how many times the scripted server in dir started.
func spawns(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "spawns"))
	return strings.Count(string(b), "\n")
}
