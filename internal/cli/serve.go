package cli

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/secret"
	"github.com/fathom-lab/fathom/internal/serve"
	"github.com/fathom-lab/fathom/internal/store"
)

func newServeCmd(env *Env) *cobra.Command {
	var path secret.DSN
	l := serve.Listen{Figures: db.Figures(), EnvToken: env.Getenv("FATHOM_SERVE_TOKEN"), EnvReadToken: env.Getenv("FATHOM_SERVE_READ_TOKEN")}
	cmd := &cobra.Command{Use: "serve", Short: serve.Short, Long: serve.Long, Example: serve.Example,
		RunE: func(cmd *cobra.Command, args []string) error {
			if l.Watch.Webhook == "" { // not a flag default: --help would show it
				l.Watch.Webhook = env.Getenv("FATHOM_SERVE_WEBHOOK")
			}
			ctx, stop := env.Interrupts(cmd.Context())
			defer stop()
			return serve.Run(ctx, l, func() (store.Store, error) { return openStore(path) }, version(), env.Stderr)
		}}
	fs := cmd.Flags()
	storeFlag(fs, env, &path)
	fs.StringVar(&l.Addr, "addr", "127.0.0.1:8080", "host:port to listen on (loopback unless TLS or --insecure-listen)")
	fs.StringVar(&l.Token, "token", "", "token that allows changes (labels, notes, deleting runs); shows in ps: prefer --token-file or $FATHOM_SERVE_TOKEN; default read-only")
	fs.StringVar(&l.TokenFile, "token-file", "", "file whose first line is the write token (mode 600)")
	fs.StringVar(&l.ReadTokenFile, "read-token-file", "", "file whose first line is a token that allows reading only (mode 600; or $FATHOM_SERVE_READ_TOKEN)")
	fs.StringVar(&l.UsersFile, "users", "", "file of users for HTTP basic auth (over TLS or loopback), NAME:ROLE:PASSWORD a line, ROLE read or write (mode 600)")
	fs.BoolVar(&l.RequireAuth, "require-auth", false, "reads need credentials on loopback too (always beyond loopback)")
	fs.StringSliceVar(&l.HostNames, "host-name", nil, "a name this server is reached by, e.g. behind a proxy (the Host header is checked; repeatable)")
	fs.StringVar(&l.AccessLog, "access-log", "-", "where to log each request (time, remote, user, role, method, path, status): - for stderr, a file, or none")
	fs.StringVar(&l.TLSCert, "tls-cert", "", "TLS certificate (PEM) to serve HTTPS")
	fs.StringVar(&l.TLSKey, "tls-key", "", "TLS private key (PEM)")
	fs.BoolVar(&l.Insecure, "insecure-listen", false, "allow plain HTTP on a non-loopback address")
	fs.StringVar(&l.Watch.Webhook, "webhook", "", "post the changes found as runs arrive to this URL (http or https; or $FATHOM_SERVE_WEBHOOK, which ps does not show)")
	fs.StringVar(&l.Watch.Format, "webhook-format", "json", "the webhook's payload: json (generic) or slack (Slack-compatible {\"text\": …})")
	fs.StringVar(&l.Watch.Link, "link", "", "the address people reach this server on, for the history page linked in webhook messages (default: the listen address)")
	fs.StringVar(&l.Watch.State, "webhook-state", defaultWebhookState(env), "private file remembering which changes were sent, so each is sent once")
	return cmd
}

// defaultWebhookState is $XDG_STATE_HOME/fathom/serve-webhook.json, else
// ~/.local/state/fathom/serve-webhook.json, else "" (then --webhook needs
// --webhook-state).
func defaultWebhookState(env *Env) string {
	if d := env.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "fathom", "serve-webhook.json")
	}
	if h := env.Getenv("HOME"); h != "" && h != "/" {
		return filepath.Join(h, ".local", "state", "fathom", "serve-webhook.json")
	}
	return ""
}
