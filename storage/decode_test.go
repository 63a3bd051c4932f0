package storage

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestDecodeOps(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []jsonOp
		fast    bool // the exact layout the writer produces
		wantErr bool
	}{
		{"put", `[{"t":"users","id":"u1","v":{"id":"u1"}}]`,
			[]jsonOp{{T: "users", ID: "u1", V: json.RawMessage(`{"id":"u1"}`)}}, true, false},
		{"delete", `[{"t":"users","id":"u1","del":true}]`,
			[]jsonOp{{T: "users", ID: "u1", Del: true}}, true, false},
		{"several", `[{"t":"a","id":"1","v":[1,{"x":"}]\""}]},{"t":"b","id":"2","del":true},{"t":"c","id":"3","v":"s"},{"t":"d","id":"4","v":12}]`,
			[]jsonOp{
				{T: "a", ID: "1", V: json.RawMessage(`[1,{"x":"}]\""}]`)},
				{T: "b", ID: "2", Del: true},
				{T: "c", ID: "3", V: json.RawMessage(`"s"`)},
				{T: "d", ID: "4", V: json.RawMessage(`12`)},
			}, true, false},
		{"escaped id", `[{"t":"users","id":"a\"b","v":{}}]`,
			[]jsonOp{{T: "users", ID: `a"b`, V: json.RawMessage(`{}`)}}, false, false},
		{"other key order", `[{"id":"u1","t":"users","v":{}}]`,
			[]jsonOp{{T: "users", ID: "u1", V: json.RawMessage(`{}`)}}, false, false},
		{"spaces", `[ {"t":"users", "id":"u1", "v":{} } ]`,
			[]jsonOp{{T: "users", ID: "u1", V: json.RawMessage(`{}`)}}, false, false},
		{"empty", `[]`, nil, false, true},
		{"not json", `[{"t":"users","id":"u1","v":{]`, nil, false, true},
		{"put and delete", `[{"t":"users","id":"u1","v":{},"del":true}]`, nil, false, true},
		{"neither", `[{"t":"users","id":"u1"}]`, nil, false, true},
		{"no table", `[{"t":"","id":"u1","v":{}}]`, nil, true, true},
		{"trailing bytes", `[{"t":"users","id":"u1","del":true}]x`, nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, fast := parseOps([]byte(tt.in), nil); fast != tt.fast {
				t.Errorf("fast path taken: got %v, want %v", fast, tt.fast)
			}
			got, err := decodeOps([]byte(tt.in), nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("decodeOps: got error %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d ops, want %d", len(got), len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if string(g.T) != w.T || string(g.ID) != w.ID || g.Del != w.Del || !bytes.Equal(g.V, w.V) {
					t.Errorf("op %d: got {%s %s %s %v}, want %+v", i, g.T, g.ID, g.V, g.Del, w)
				}
			}
		})
	}
}

// FuzzDecodeOps checks the fast path against encoding/json: whenever the
// fast path accepts input whose values are valid JSON, encoding/json reads
// the same ops from it.
func FuzzDecodeOps(f *testing.F) {
	f.Add([]byte(`[{"t":"users","id":"u1","v":{"id":"u1","n":[1,2,{"s":"]}\\\""}]}}]`))
	f.Add([]byte(`[{"t":"users","id":"u1","del":true},{"t":"s","id":"x","v":null}]`))
	f.Add([]byte(`[{"t":"users","id":"u1","v":"str"}]`))
	f.Add([]byte(`[{"t":"users","id":"u1","v":-1.5e3}]`))
	f.Add([]byte("[{\"t\":\"\",\"id\":\"\",\"v\":\t0}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := parseOps(data, nil)
		if !ok {
			return
		}
		for i, o := range fast {
			// A cold table reads the value back at At: it must be there.
			if !o.Del && (o.At < 0 || o.At+len(o.V) > len(data) || !bytes.Equal(data[o.At:o.At+len(o.V)], o.V)) {
				t.Fatalf("%q op %d: value %q not at its position %d", data, i, o.V, o.At)
			}
		}
		for _, o := range fast {
			if !o.Del && !json.Valid(o.V) {
				return // rejected later, when the value is decoded
			}
		}
		var js []jsonOp
		if err := json.Unmarshal(data, &js); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json: %v", data, err)
		}
		if len(js) != len(fast) {
			t.Fatalf("%q: fast path %d ops, encoding/json %d", data, len(fast), len(js))
		}
		for i, o := range fast {
			j := js[i]
			if string(o.T) != j.T || string(o.ID) != j.ID || o.Del != j.Del || !bytes.Equal(o.V, j.V) {
				t.Fatalf("%q op %d: fast path {%q %q %q %v}, encoding/json %+v", data, i, o.T, o.ID, o.V, o.Del, j)
			}
		}
	})
}
