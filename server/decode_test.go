package server

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// decodeSeeds are call request bodies of every kind: what clients send,
// other spellings encoding/json matches, and what it refuses.
var decodeSeeds = []string{
	`{"tool":"read_file","args":{"path":"hello.txt"},"cwd":"/tmp/proj"}`,
	`{"branch":"main","tool":"shell","args":{"command":"ls -la","timeout_ms":60000}}`,
	` { "tool" : "shell" , "args" : { "command" : "a \"b\" {c}" , "x" : [1, {"y": "}"}] } } `,
	`{"tool":"read_file","args":null,"cwd":""}`,
	`{"tool":"read_file","args":"not an object"}`,
	`{}`,
	`null`,
	`{"Tool":"read_file"}`,
	`{"TOOL":"read_file","ARGS":{}}`,
	`{"to\u006fl":"read_file"}`,
	`{"tool":"a","tool":"b"}`,
	`{"tool":"read_file","bogus":1}`,
	`{"tool":"read_file","args":{"bogus":1}}`,
	`{"tool":1}`,
	`{"tool":"read_file"}{"tool":"shell"}`,
	`{"tool":"read_file"} x`,
	`{"tool":`,
	`[{"tool":"read_file"}]`,
	`"tool"`,
	``,
	`{"tool":"read_file","cwd":null}`,
	`{"args":{},"tool":"x\\"}`,
	`{"tool":"\ud83d\ude00"}`,
}

// decodeCall answers as decodeJSON does, whatever the body.
func TestDecodeCallAsDecodeJSON(t *testing.T) {
	for _, body := range decodeSeeds {
		checkDecodeCall(t, body)
	}
}

func FuzzDecodeCall(f *testing.F) {
	for _, body := range decodeSeeds {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) { checkDecodeCall(t, body) })
}

func checkDecodeCall(t *testing.T, body string) {
	t.Helper()
	var got, want callRequest
	gotErr, wantErr := decodeCall([]byte(body), &got), decodeJSON([]byte(body), &want)
	if !reflect.DeepEqual(got, want) || errText(gotErr) != errText(wantErr) {
		t.Fatalf("%q: decodeCall gave %+v, %v; decodeJSON %+v, %v", body, got, gotErr, want, wantErr)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// What clients send takes the way without a json.Decoder.
func TestDecodeCallCommonCase(t *testing.T) {
	for _, body := range decodeSeeds[:4] {
		if !onlyKeys([]byte(body), callKey) {
			t.Errorf("%s: not decoded the short way", body)
		}
	}
}

// callKey knows exactly the JSON names of callRequest's fields.
func TestCallKeyNamesTheFields(t *testing.T) {
	var names []string
	typ := reflect.TypeFor[callRequest]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
		if !callKey([]byte(name)) {
			t.Errorf("callKey does not know %q", name)
		}
	}
	for _, other := range []string{"", "Tool", "bogus", "tools"} {
		if callKey([]byte(other)) && !slices.Contains(names, other) {
			t.Errorf("callKey knows %q, which is no field", other)
		}
	}
}
