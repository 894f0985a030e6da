package audit

import (
	"bytes"
	"encoding/json"
)

// entryJSON is an Entry as JSON: its fields, its Status, and the payload of
// a file or org-roam tool as a JSON value in "result" rather than a string
// in "stdout".
type entryJSON struct {
	plainEntry
	Status string          `json:"status"`
	Result json.RawMessage `json:"result,omitempty"`
}

type plainEntry Entry

// MarshalJSON encodes the entry with its status; a tool's JSON payload
// (kept in Stdout) is encoded once, as "result".
func (e Entry) MarshalJSON() ([]byte, error) {
	v := entryJSON{plainEntry: plainEntry(e), Status: e.Status()}
	if e.Tool != "shell" && isJSONObject(e.Stdout) {
		v.Result = json.RawMessage(e.Stdout)
		v.Stdout = ""
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Entry) UnmarshalJSON(data []byte) error {
	var v entryJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*e = Entry(v.plainEntry)
	if len(v.Result) > 0 && e.Stdout == "" {
		var buf bytes.Buffer
		if err := json.Compact(&buf, v.Result); err != nil {
			return err
		}
		e.Stdout = buf.String()
	}
	return nil
}

func isJSONObject(s string) bool {
	t := bytes.TrimSpace([]byte(s))
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}
