package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
)

func TestStoreCallIDShape(t *testing.T) {
	for _, tc := range []struct {
		name, id string
		ok       bool
	}{
		{"audit call id", audit.NewCallID(time.Now()), true},
		{"shortest", "0123456789", true},
		{"longest", strings.Repeat("aZ9", 13) + "x", true},
		{"too short", "012345678", false},
		{"too long", strings.Repeat("a", 41), false},
		{"empty", "", false},
		{"path separator", "01234/6789", false},
		{"dot dot", "..23456789", false},
		{"non-ASCII letter", "0123456789é", false},
		{"dash", "01234-6789", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := gateway.StoreCall(dir, tc.id, policy.Call{Tool: "shell"})
			if (err == nil) != tc.ok {
				t.Fatalf("StoreCall(%q) = %v, want ok=%v", tc.id, err, tc.ok)
			}
			if tc.ok {
				if _, err := os.Stat(filepath.Join(dir, gateway.StoredCallsDir, tc.id+".json")); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
