package policy_test

import "testing"

func TestProgPackageManagers(t *testing.T) {
	runProgCases(t, []string{"npm", "pip", "cargo"}, []progCase{
		{cmd: "npm test"},
		{cmd: "npm run build"},
		{cmd: "npm ci"},
		{cmd: "pip install -r requirements.txt"},
		{cmd: "cargo build --release"},
		{cmd: "npm exec cowsay", reason: "dangerous_argument"},
		{cmd: "npx cowsay", reason: "command_not_allowed"},
		{cmd: "npm install -g left-pad", reason: "dangerous_argument"},
		{cmd: "npm config set script-shell /bin/sh", reason: "dangerous_argument"},
		{cmd: "npm --script-shell=sh test", reason: "dangerous_argument"},
		{cmd: "npm config edit --editor=sh", reason: "dangerous_argument"},
		{cmd: "pip install --user x", reason: "dangerous_argument"},
		{cmd: "pip install -r OUT/req.txt", reason: "path_not_in_scope"},
		{cmd: "cargo install ripgrep", reason: "dangerous_argument"},
		{cmd: "cargo --config 'target.x.runner=\"sh\"' run", reason: "dangerous_argument"},
	})
}
