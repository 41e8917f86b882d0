package serve

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The web UI behind authentication: the browser's basic-auth prompt (answered here
// as a user would, through the DevTools protocol) opens the pages, and a user with
// the write role sets a label without being asked for a token.
func TestBrowseWithLogin(t *testing.T) {
	b := newTab(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "users"), "bob:write:"+bobPw+"\n")
	base, out := startServe(t, Listen{Addr: "127.0.0.1:0", RequireAuth: true, UsersFile: filepath.Join(dir, "users")})

	var challenges, dialogs atomic.Int32
	call := func(f func(ctx context.Context, t *chromedp.Target) error) {
		go func() { _ = chromedp.Do(b.ctx, chromedp.Func(f)) }()
	}
	if err := chromedp.Listen(b.ctx, func(ev any) {
		switch e := ev.(type) {
		case *cdpfetch.EventRequestPaused:
			call(func(ctx context.Context, t *chromedp.Target) error {
				_, err := cdp.Call(ctx, t, cdpfetch.ContinueRequest, cdpfetch.ContinueRequestParams{RequestID: e.RequestID})
				return err
			})
		case *cdpfetch.EventAuthRequired:
			challenges.Add(1)
			call(func(ctx context.Context, t *chromedp.Target) error {
				_, err := cdp.Call(ctx, t, cdpfetch.ContinueWithAuth, cdpfetch.ContinueWithAuthParams{RequestID: e.RequestID,
					AuthChallengeResponse: &cdpfetch.AuthChallengeResponse{Response: cdpfetch.AuthChallengeResponseResponseProvideCredentials, Username: "bob", Password: bobPw}})
				return err
			})
		case *page.EventJavascriptDialogOpening:
			dialogs.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	yes := true
	b.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cdpfetch.Enable, cdpfetch.EnableParams{HandleAuthRequests: &yes})
		return err
	}))

	b.open(base + "/#/runs")
	if n := b.num(`document.querySelectorAll("#runs tbody tr").length`); n != 2 {
		t.Fatalf("%v rows, want 2", n)
	}
	if challenges.Load() == 0 {
		t.Fatal("the browser was never asked for credentials: the page was open without them")
	}
	b.open(base + "/#/run/1")
	b.str(`(() => { const [k, v] = document.querySelectorAll(".edit input"); k.value = "browser"; v.value = "yes"; return ""; })()`)
	b.str(`(Array.from(document.querySelectorAll(".edit button")).find(e => e.textContent === "Set label").click(), "")`)
	b.until(`document.body.textContent.includes("browser=yes")`)
	if dialogs.Load() != 0 {
		t.Errorf("%d dialogs opened (a token prompt): the write role should need none", dialogs.Load())
	}
	if !strings.Contains(out.String(), " bob write POST /api/runs/1/labels 200 ") {
		t.Errorf("the access log lacks bob's change:\n%s", out.String())
	}
	if strings.Contains(out.String(), bobPw) {
		t.Error("the password is in the access log")
	}
}
