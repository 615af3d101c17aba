package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rogpeppe/go-internal/testscript"
)

// The scripts' browser is headless Chromium, from Debian's chromium
// package (scripts/install-chromium.sh installs it): $AGENTC_CHROMIUM, else
// chromium on the PATH. Where there is none, the scripts that need one
// skip, saying so, unless AGENTC_REQUIRE_CHROMIUM is set (the test script
// sets it), which makes them fail.

// screenSize is the browser window's, and so a screenshot's.
const screenWidth, screenHeight = 1280, 800

func chromium() (string, string) {
	if p := os.Getenv("AGENTC_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("AGENTC_CHROMIUM names %s: %v", p, err)
		}
		return p, ""
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		return "", "chromium is not on the PATH and AGENTC_CHROMIUM is not set; install it with scripts/install-chromium.sh"
	}
	return p, ""
}

// chromiumCondition is the [chromium] condition: a browser is there, or
// must be.
func chromiumCondition() bool {
	prog, why := chromium()
	if prog == "" && os.Getenv("AGENTC_REQUIRE_CHROMIUM") == "" {
		fmt.Fprintf(os.Stderr, "SKIPPED: scripts that need a browser: %s\n", why)
		return false
	}
	return true
}

// browse opens the page file in a headless browser, waits for it to load
// and for its script to mark it ready, and does what do says.
func browse(ts *testscript.TestScript, page string, do func(ctx context.Context) error) {
	prog, why := chromium()
	if prog == "" {
		ts.Fatalf("no browser: %s", why)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(prog),
		chromedp.WindowSize(screenWidth, screenHeight), chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(ts.MkAbs(".chromium")))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium's sandbox refuses to run as root
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx, stop := chromedp.NewExecAllocator(ctx, opts...)
	defer stop()
	ctx, closeTab := chromedp.NewContext(ctx)
	defer closeTab()
	u := url.URL{Scheme: "file", Path: ts.MkAbs(page)}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(screenWidth, screenHeight), chromedp.Navigate(u.String())); err != nil {
		ts.Fatalf("opening %s in %s: %v", page, prog, err)
	}
	// The page says it is ready: its script, the last thing it runs,
	// counts its calls on the body.
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("body[data-calls]"))); err != nil {
		ts.Fatalf("%s: its script never marked it ready: %v", page, err)
	}
	if err := do(ctx); err != nil {
		ts.Fatalf("%s: %v", page, err)
	}
}

// screenshot PAGE PNG [SELECTOR...] takes a screenshot of the page's
// window with its timeline (#timeline) scrolled to the top, writes it to
// PNG, and fails unless it is a PNG of the window's size in which the
// timeline is drawn: a part of its area is not the page's background, and
// inside its bars' boxes (.bar) some pixels are of a bar's colour (a
// saturated one; text and lines are grey, but for a denial's). Each
// SELECTOR (a CSS selector) must name an element drawn in that window: its
// box is on the screen, and not of one colour (text, or a bar on its
// track).
func screenshot(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: screenshot PAGE PNG [SELECTOR...]")
	}
	browse(ts, args[0], func(ctx context.Context) error {
		// The screenshot is of the frame last painted: the promise
		// resolves once a frame after the scroll has been (the second
		// animation frame after it starts when the first is painted).
		r, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`new Promise(done => {
			const t = document.querySelector("#timeline");
			t.scrollIntoView();
			requestAnimationFrame(() => requestAnimationFrame(() => {
				const r = t.getBoundingClientRect();
				done([r.left, r.top, r.right, r.bottom]);
			}));
		})`, chromedp.EvalAwaitPromise))
		if err != nil {
			return err
		}
		// The bars' boxes, where the screenshot shows them: only pixels
		// of a bar's colour inside one count as a bar drawn (text on the
		// page may be coloured too, as a denial's is).
		bars, err := chromedp.Run(ctx, chromedp.Evaluate[[][]float64](`Array.from(document.querySelectorAll("#timeline .bar"), e => {
			const r = e.getBoundingClientRect();
			return [r.left, r.top, r.right, r.bottom];
		})`))
		if err != nil {
			return err
		}
		var boxes [][]float64
		for _, sel := range args[2:] {
			box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
				const e = document.querySelector(`+strconv.Quote(sel)+`);
				if (!e) return [];
				const r = e.getBoundingClientRect();
				return [r.left, r.top, r.right, r.bottom];
			})()`))
			if err != nil {
				return err
			}
			if len(box) != 4 {
				return fmt.Errorf("no element is %s", sel)
			}
			boxes = append(boxes, box)
		}
		shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			return err
		}
		if err := os.WriteFile(ts.MkAbs(args[1]), shot, 0o644); err != nil {
			return err
		}
		img, err := png.Decode(bytes.NewReader(shot))
		if err != nil {
			return fmt.Errorf("the screenshot is not a PNG: %v", err)
		}
		if b := img.Bounds(); b.Dx() != screenWidth || b.Dy() != screenHeight {
			return fmt.Errorf("the screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), screenWidth, screenHeight)
		}
		region := image.Rect(int(r[0]), int(r[1]), int(r[2]), int(r[3])).Intersect(img.Bounds())
		if region.Dx() < 100 || region.Dy() < 100 {
			return fmt.Errorf("the timeline is %v on the screen: too small to see", region)
		}
		var barBoxes []image.Rectangle
		for _, b := range bars {
			if len(b) != 4 {
				return fmt.Errorf("a bar's box is %v", b)
			}
			// Rounded outward: a bar's edges fall between pixels,
			// which are drawn part in its colour.
			barBoxes = append(barBoxes, image.Rect(int(math.Floor(b[0])), int(math.Floor(b[1])), int(math.Ceil(b[2])), int(math.Ceil(b[3]))))
		}
		inBar := func(x, y int) bool {
			return slices.ContainsFunc(barBoxes, image.Pt(x, y).In)
		}
		bg := img.At(region.Min.X, region.Min.Y)
		inked, drawnBars := 0, 0
		for y := region.Min.Y; y < region.Max.Y; y++ {
			for x := region.Min.X; x < region.Max.X; x++ {
				c := img.At(x, y)
				if c != bg {
					inked++
				}
				if saturated(c) && inBar(x, y) {
					drawnBars++
				}
			}
		}
		area := region.Dx() * region.Dy()
		ts.Logf("timeline %v: %d of %d pixels not background, %d of a bar's colour in %d bars", region, inked, area, drawnBars, len(bars))
		if inked*100 < area {
			return fmt.Errorf("the timeline is blank: %d of its %d pixels are not background", inked, area)
		}
		// A bar is at least 4 pixels wide (page.css) and 10 high, less
		// its rounded corners: an effect that took no whole millisecond,
		// as the test model's calls may, is drawn that narrow, so one
		// such bar is all a short run's timeline may show.
		if drawnBars < minBarPixels {
			return fmt.Errorf("the timeline has no bars: %d pixels of a bar's colour inside the %d bars' boxes", drawnBars, len(bars))
		}
		for i, box := range boxes {
			sel := args[2+i]
			on := image.Rect(int(box[0]), int(box[1]), int(box[2]), int(box[3])).Intersect(img.Bounds())
			if on.Empty() {
				return fmt.Errorf("%s is at %v, not on the screen", sel, box)
			}
			corner, drawn := img.At(on.Min.X, on.Min.Y), 0
			for y := on.Min.Y; y < on.Max.Y; y++ {
				for x := on.Min.X; x < on.Max.X; x++ {
					if img.At(x, y) != corner {
						drawn++
					}
				}
			}
			ts.Logf("%s at %v: %d pixels drawn", sel, on, drawn)
			if drawn == 0 {
				return fmt.Errorf("%s at %v is not drawn: its pixels are all of one colour", sel, on)
			}
		}
		return nil
	})
}

// minBarPixels is fewer pixels than the narrowest bar covers (4 by 10,
// less its rounded corners: about 30). Without bars there are none.
const minBarPixels = 12

// saturated tells a bar's colour from text, lines and tracks, which are
// grey.
func saturated(c interface{ RGBA() (r, g, b, a uint32) }) bool {
	r, g, b, _ := c.RGBA()
	hi, lo := max(r, g, b)>>8, min(r, g, b)>>8
	return hi-lo > 80
}

// dom PAGE FILE writes the page's document, as it is once its scripts
// ran, to FILE.
func dom(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: dom PAGE FILE")
	}
	browse(ts, args[0], func(ctx context.Context) error {
		html, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.documentElement.outerHTML"))
		if err != nil {
			return err
		}
		title, err := chromedp.Run(ctx, chromedp.Title())
		if err != nil {
			return err
		}
		return os.WriteFile(ts.MkAbs(args[1]), []byte("title: "+title+"\n"+html+"\n"), 0o644)
	})
}
