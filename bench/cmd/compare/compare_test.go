package main

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// TestRowGroups: every group of the request table has exactly one ceiling,
// and row names (the -only filter, the output file names) are unique.
func TestRowGroups(t *testing.T) {
	rows := requestRows(config{bin: "bin", tsung: "tsung"})
	ceilings := map[string]int{}
	names := map[string]bool{}
	for _, r := range rows {
		if names[slug(r.name)] {
			t.Errorf("row name %q is not unique", r.name)
		}
		names[slug(r.name)] = true
		if r.ceiling {
			ceilings[r.group()]++
		}
	}
	for _, r := range rows {
		if ceilings[r.group()] != 1 {
			t.Errorf("%s: group %q has %d ceilings", r.name, r.group(), ceilings[r.group()])
		}
	}
	for _, want := range []string{"mcpwire TCP 1×64", "mcpwire TCP 64×1", "mcpwire Unix 1×64", "mcpwire Unix 64×1",
		"raw gnet TCP 1×64", "raw gnet Unix 64×1", "mcpwire TCP 64×1 (tsung)", "mcpwire stdio", "mcpwire HTTP"} {
		if !names[slug(want)] {
			t.Errorf("no row %q", want)
		}
	}
}

func TestSelectRows(t *testing.T) {
	rows := requestRows(config{bin: "bin", tsung: "tsung"})
	for only, want := range map[string][]string{
		"mcpwire Unix": {"mcpwire Unix 1×64", "raw gnet Unix 1×64", "mcpwire Unix 64×1", "raw gnet Unix 64×1"},
		"go-sdk":       {"go-sdk HTTP", "raw fasthttp", "go-sdk stdio", "raw stdio lines"},
		"tsung":        {"mcpwire TCP 64×1 (tsung)", "raw gnet TCP 64×1 (tsung)"},
		"raw net":      {"raw gnet TCP 64×1", "raw net TCP 64×1"},
	} {
		var got []string
		for _, r := range selectRows(rows, only) {
			got = append(got, r.name)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("-only %q: %q, want %q", only, got, want)
		}
	}
}

// TestTsungConfig: the scenario is well-formed XML and carries the fixture
// line, newline included, byte for byte.
func TestTsungConfig(t *testing.T) {
	line, err := fixtureLine()
	if err != nil {
		t.Fatal(err)
	}
	conf, err := tsungConfig("127.0.0.1:18199", line, 30e9)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(conf))
	dec.Strict = false
	var data string
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "raw" {
			for _, a := range se.Attr {
				if a.Name.Local == "data" {
					data = a.Value
				}
			}
		}
	}
	if data != string(line)+"\n" {
		t.Errorf("raw data = %q, want the fixture and a newline", data)
	}
	if !strings.Contains(string(conf), `port="18199"`) {
		t.Errorf("no port in %s", conf)
	}
}

func TestParseTsungLine(t *testing.T) {
	l := ` {"timestamp": 1796187984,  "samples": [   {"name": "users", "value": 64, "max": 64}, {"name": "request", "value": 20625, "mean": 1.5606,"stddev": 1.2,"max":  34.9,"min": 0.02 ,"global_mean": 0 ,"global_count": 0}, {"name": "size_rcv", "value": 5238750, "total": 5238750}, {"name": "error_abort", "value": 1, "total": 1}]}]}`
	s, ok := parseTsungLine(l)
	if !ok || s.ts != 1796187984 || s.requests != 20625 || s.meanMs != 1.5606 || s.rcv != 5238750 || s.errors != 1 || s.users != 64 {
		t.Errorf("parsed %+v, %v", s, ok)
	}
	if _, ok := parseTsungLine(` "stats": [`); ok {
		t.Error("the header line parsed as a second")
	}
}
