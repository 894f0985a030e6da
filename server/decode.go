package server

import "encoding/json"

// decodeCall decodes a call request exactly as decodeJSON does, without a
// json.Decoder in the common case (every check and call comes this way): a
// JSON object whose keys are callRequest's own names, spelled as its tags
// spell them. Anything else — another spelling encoding/json would still
// match, an unknown key, an error — goes through decodeJSON, for its
// answer and its error.
func decodeCall(data []byte, req *callRequest) error {
	if json.Unmarshal(data, req) == nil && onlyKeys(data, callKey) {
		return nil
	}
	*req = callRequest{}
	return decodeJSON(data, req)
}

// callKey reports whether key is the JSON name of a field of callRequest.
func callKey(key []byte) bool {
	switch string(key) {
	case "branch", "tool", "args", "cwd":
		return true
	}
	return false
}

// onlyKeys reports whether data, valid JSON, is an object each of whose
// keys, as written (escapes included), is one that known accepts.
func onlyKeys(data []byte, known func(key []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	for i < len(data) && data[i] == '"' {
		end := skipString(data, i)
		if end >= len(data) || !known(data[i+1:end]) {
			return false
		}
		i = skipSpace(data, end+1)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		if i >= len(data) {
			return false
		}
		i = skipSpace(data, skipValue(data, i))
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(data, i+1)
		default:
			return false
		}
	}
	return false
}

// skipValue returns the index just past the JSON value that starts at
// data[i].
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipString(data, i) + 1
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = skipString(data, i)
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	// A number, true, false or null.
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index of the quote that ends the string whose
// opening quote is data[i] (len(data) when there is none).
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(data)
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
