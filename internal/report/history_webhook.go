package report

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Webhook payloads for the changes a regression check found: generic JSON for any
// receiver, or a Slack-compatible message (Slack's incoming webhooks, and the many
// chat tools that accept its {"text": …} shape). link is the series' history page
// ("" leaves it out).

// WebhookFormats are the payload shapes --webhook-format takes.
var WebhookFormats = []string{"json", "slack"}

// WebhookPayload is the body to post for r in format ("json" or "slack").
func WebhookPayload(r *Regressions, format, link string) ([]byte, error) {
	h := r.History
	switch format {
	case "json":
		changes := append(append([]HistoryChange{}, r.Found...), r.Better...)
		return json.Marshal(struct {
			Event      string          `json:"event"`
			Series     string          `json:"series"`
			Title      string          `json:"title"`
			Regressed  bool            `json:"regressed"`
			NewestRuns []int64         `json:"newest_runs"`
			Changes    []HistoryChange `json:"changes"`
			Link       string          `json:"link,omitempty"`
		}{"fathom.changes", h.ID, h.Title, r.Regressed(), r.NewestRuns, changes, link})
	case "slack":
		var b strings.Builder
		verdict := "changed"
		if r.Regressed() {
			verdict = "*regressed*"
		}
		name := h.ID
		if link != "" {
			name = "<" + link + "|" + h.ID + ">"
		}
		fmt.Fprintf(&b, "fathom: series %s %s (%s)", name, verdict, h.Title)
		for _, c := range r.Found {
			fmt.Fprintf(&b, "\n:small_red_triangle_down: at run %d: %s\n      %s", c.RunID, changeLine(c), explainLine(c))
		}
		for _, c := range r.Better {
			fmt.Fprintf(&b, "\n:small_red_triangle: at run %d: %s\n      %s", c.RunID, changeLine(c), explainLine(c))
		}
		return json.Marshal(map[string]string{"text": b.String()})
	}
	return nil, fmt.Errorf("webhook format %q: use %s", format, orList(WebhookFormats))
}

// HistoryLink is the history page of series on a fathom serve at base
// (http://host:port), or "" without a base.
func HistoryLink(base, series string) string {
	if base == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + "/history/" + url.PathEscape(series)
}
