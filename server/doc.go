// Package server is scopegate's HTTP API (docs/reference.md, HTTP): one process
// serving many sessions through the same gateway, and so the same decision
// path, as the CLI. It owns the routes, JSON errors, bearer auth, the Origin
// check, body limits, per-request timeouts, the branch registry, event
// replay from the audit, and the lock that keeps one server per sessions
// root. It also serves the live page (docs/page.md): its files, embedded
// (page/), and routes in page.go; its feed of the gateway's events
// (feed.go); the offers it holds as an approval channel (offers.go); its
// chart of denials (denials.go).
package server
