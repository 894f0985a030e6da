package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// ExpandScope widens a branch's scope (sessions.ExpandScope), relative
// path patterns anchored at the session's root, and records the change in
// the branch's tools.org: who asked, when, and what was added, so that a
// reader sees when and how a command became allowed. An expansion that
// adds nothing is not recorded. If the entry cannot be written the scope
// has already changed: the error says so. An expansion the managed policy
// refuses (beyond its ceiling) is ErrManagedRefused, and nothing changes.
func (g *Gateway) ExpandScope(ctx context.Context, branchDir string, add sessions.Expansion, who string) (sessions.Expanded, error) {
	g.syncFiles()
	return g.expandScope(ctx, branchDir, func() string { return g.readMeta(branchDir).root }, add, who)
}

// expandScope is ExpandScope with the session's root given, asked for only
// when a pattern is relative.
func (g *Gateway) expandScope(ctx context.Context, branchDir string, root func() string, add sessions.Expansion, who string) (sessions.Expanded, error) {
	add, err := add.Anchor(root)
	if err != nil {
		return sessions.Expanded{}, err
	}
	if err := g.refuseExpansion(add); err != nil {
		return sessions.Expanded{}, err
	}
	res, err := sessions.ExpandScope(ctx, branchDir, add)
	if err != nil || len(res.Added) == 0 {
		return res, err
	}
	x := res.Expansion
	lists := map[string][]string{
		"paths.read": x.Read, "paths.write": x.Write, "paths.deny": x.Deny,
		"shell_commands.allow": x.AllowCommands, "shell_commands.deny": x.DenyCommands,
		"org_roam_patterns.subdirectory": x.RoamSubdirectories, "org_roam_patterns.tags": x.RoamTags,
		"org_roam_patterns.node_ids": x.RoamNodeIDs, "network": x.AllowHosts,
	}
	if x.Network != "" {
		lists["network"] = []string{x.Network.String()}
	}
	for _, p := range x.AllowSockets {
		lists["network"] = append(slices.Clip(lists["network"]), policy.SocketEntry(p))
	}
	args := map[string][]string{}
	var summary []string
	keys := make([]string, 0, len(lists))
	for k := range lists {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if len(lists[k]) > 0 && len(res.Added[k]) > 0 {
			args[k] = lists[k]
			summary = append(summary, k+" += "+strings.Join(lists[k], ", "))
		}
	}
	raw, _ := json.Marshal(args)
	now := g.opts.Now()
	e := audit.Entry{CallID: audit.NewCallID(now), Time: now, Tool: audit.ToolScopeExpand,
		Decision: audit.DecisionExpanded, Mode: audit.ModeScope, Resource: who,
		Message: "scope widened by " + who, Args: raw, Summary: strings.Join(summary, "; "), Managed: g.loadManaged().sum()}
	if err := g.record(ctx, g.log(branchDir), audit.EventScopeChange, Target{BranchDir: branchDir, Via: ViaCLI}, e); err != nil {
		return res, fmt.Errorf("scope.yml was widened, but the change could not be recorded in tools.org: %w", err)
	}
	return res, nil
}
