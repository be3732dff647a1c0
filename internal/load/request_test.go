package load

import (
	"encoding/json"
	"testing"
)

// TestRequestBody: the exported fixture is the call the generator sends,
// with the id in both places.
func TestRequestBody(t *testing.T) {
	b, err := RequestBody(Config{Target: "tcp://127.0.0.1:1", Duration: 1}, 7)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ID     int    `json:"id"`
		Method string `json:"method"`
		Params struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
			Meta      map[string]any    `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if m.ID != 7 || m.Method != "tools/call" || m.Params.Name != DefaultTool || m.Params.Arguments["text"] != "hello world" {
		t.Errorf("unexpected fixture %s", b)
	}
	if m.Params.Meta["progressToken"] != 7.0 || m.Params.Meta["io.modelcontextprotocol/protocolVersion"] != ProtocolVersion {
		t.Errorf("_meta %v", m.Params.Meta)
	}
	b, _ = RequestBody(Config{Target: "tcp://127.0.0.1:1", Duration: 1, NoProgressToken: true}, 7)
	m.Params.Meta = nil
	if json.Unmarshal(b, &m) != nil || m.Params.Meta["progressToken"] != nil {
		t.Errorf("-progress-token=false still sends one: %s", b)
	}
}
