// Drive Agent Chat UI in Debian's chromium (playwright-core) through a list of steps, as a person would.
//
//   node drive.cjs <scenario.json>
//
// scenario.json: {"url", "chromium", "playwright", "artifacts", "name", "timeout_ms", "steps": [...]}.
// Each step is {"do": <verb>, ...}; every step waits for what a person would wait for (a card, a button, the run
// to finish), bounded by timeout_ms. After each step the page's visible text is recorded; "shot" steps also
// save a full-page screenshot. Writes one JSON report to <scenario>.out.json: {"ok", "steps": [{"do", "text",
// "shot"}], "error", "toasts"}; exits 1 when a step failed (the report says which, with the page text then).
"use strict";
const fs = require("fs");
const path = require("path");
const os = require("os");

const scenario = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const { chromium } = require(scenario.playwright);
const TIMEOUT = scenario.timeout_ms || 60000;
const T0 = Date.now();
const network = { threadCreated: -1, lastSearch: -1 }; // when (ms from start) the thread began, the list was fetched

async function idle(page) {
  // A run is over when the composer shows "Send" again (it shows "Cancel" while the stream is open).
  await page.getByRole("button", { name: "Cancel" }).waitFor({ state: "detached", timeout: TIMEOUT });
  await page.getByRole("button", { name: "Send" }).waitFor({ timeout: TIMEOUT });
}

function card(page) {
  // The interrupt card: the block holding "Mark as Resolved".
  return page.locator("div.flex.min-h-full.w-full.max-w-full.flex-col.gap-9");
}

async function field(page, label) {
  // The textarea under a card field's label (Agent Chat UI shows the arg key in Start Case just above its box).
  const box = card(page)
    .locator("p", { hasText: new RegExp(`^${label}$`) })
    .locator("xpath=following-sibling::textarea");
  await box.first().waitFor({ timeout: TIMEOUT });
  return box.first();
}

async function cardFields(page) {
  // {label: value} of the card's text boxes (innerText leaves out what a textarea holds).
  return card(page).evaluateAll((cards) => {
    const out = {};
    for (const c of cards) {
      for (const box of c.querySelectorAll("textarea")) {
        const label = box.previousElementSibling ? box.previousElementSibling.innerText : "";
        out[label] = box.value;
      }
    }
    return out;
  });
}

function appFrame(page) {
  // An MCP App: the host component's iframe (the sandbox proxy, on the API's origin), and the app inside it.
  return page.frameLocator('iframe[title^="MCP App ui://"]').frameLocator('iframe[title="MCP App"]');
}

async function appFacts(page) {
  // What the page, the sandbox proxy and the app each are: origins, sandbox flags, what the app saw of its probe.
  const outer = page.locator('iframe[title^="MCP App ui://"]').first();
  const facts = {
    page_url: page.url(),
    page_cookie: await page.evaluate(() => document.cookie),
    outer_sandbox: await outer.getAttribute("sandbox"),
    outer_src: await outer.getAttribute("src"),
  };
  for (const frame of page.frames()) {
    if (frame.url().includes("/mcp-apps/sandbox")) {
      facts.proxy_origin = await frame.evaluate(() => window.origin);
      facts.inner_sandbox = await frame.evaluate(() => document.querySelector("iframe").getAttribute("sandbox"));
    } else if (frame.url() === "about:srcdoc") {
      facts.app_origin = await frame.evaluate(() => window.origin);
      facts.app_probe = await frame.evaluate(() => document.getElementById("probe").innerText);
      facts.app_status = await frame.evaluate(() => document.getElementById("status").innerText);
      facts.app_files = await frame.evaluate(() => document.getElementById("files").innerText);
    }
  }
  return facts;
}

const verbs = {
  async app_click(page, step) {
    // A button inside the app; `idle`: then wait for the run it started to end (or pause on a card).
    const app = appFrame(page);
    const target = step.selector ? app.locator(step.selector) : app.getByRole("button", { name: step.button, exact: true });
    await target.click();
    if (step.idle) await idle(page);
  },
  async app_text(page, step) {
    // Wait until the app shows `text`.
    await appFrame(page).getByText(step.text, { exact: false }).first().waitFor({ timeout: TIMEOUT });
  },
  async page_click(page, step) {
    // A button of the page outside the card (the host component's Open / Send / Dismiss).
    await page.getByRole("button", { name: step.button, exact: true }).first().click();
  },
  async cookie(page, step) {
    await page.evaluate((cookie) => { document.cookie = cookie; }, step.cookie);
  },
  async app_facts(page, step) {},
  async open(page, step) {
    const timeout = step.timeout_ms || TIMEOUT; // the first load makes next dev compile the page
    await page.goto(scenario.url, { timeout });
    await page.getByPlaceholder("Type your message...").waitFor({ timeout });
  },
  async send(page, step) {
    await page.getByPlaceholder("Type your message...").fill(step.text);
    await page.getByRole("button", { name: "Send" }).click();
    await page.getByText(step.text, { exact: true }).first().waitFor({ timeout: TIMEOUT });
    await idle(page);
  },
  async card(page, step) {
    // Wait for the card of `title` (the action name) to be the one shown.
    await card(page).locator("p.text-2xl", { hasText: step.title }).waitFor({ timeout: TIMEOUT });
    if (step.selected) {
      await page.getByText(`Currently selected: ${step.selected}`).waitFor({ timeout: TIMEOUT });
    }
  },
  async fill(page, step) {
    const box = await field(page, step.field);
    await box.fill(step.value);
  },
  async click(page, step) {
    // A button on the card ("Approve", "Submit", "Submit rejection"); then the resumed run to end.
    await card(page).getByRole("button", { name: step.button, exact: true }).click();
    await idle(page);
  },
  async reject(page, step) {
    await (await field(page, "Reason")).fill(step.reason);
    await card(page).getByRole("button", { name: "Submit rejection", exact: true }).click();
    await idle(page);
  },
  async key(page, step) {
    // Press `keys` (e.g. "Control+Enter") in a card box, as a person would; then the run it starts to end.
    const box = await field(page, step.field);
    await box.focus();
    await page.keyboard.press(step.keys);
    await idle(page);
  },
  async resolve(page, step) {
    // "Mark as Resolved" (it sends Command(goto=END)); then the run it starts to end.
    await page.getByRole("button", { name: "Mark as Resolved", exact: true }).click();
    await idle(page);
  },
  async clear_toasts(page, step) {
    // Mark every toast shown now as seen, so the next "toast" step waits for one that comes after. (Clicking their
    // close buttons waited out the whole step timeout while sonner stacked and animated them.)
    await page.evaluate(() => {
      for (const t of document.querySelectorAll("[data-sonner-toast]")) t.setAttribute("data-lgmcp-seen", "1");
    });
  },
  async toast(page, step) {
    // Wait until a toast holding `text` is shown that was not there at the last clear_toasts.
    await page
      .locator("[data-sonner-toast]:not([data-lgmcp-seen])", { hasText: step.text })
      .first()
      .waitFor({ timeout: TIMEOUT });
  },
  async type_at_once(page, step) {
    // As soon as the card of `title` shows, type `value` into `field` (no wait in between), and note the time.
    await card(page).locator("p.text-2xl", { hasText: step.title }).waitFor({ timeout: TIMEOUT });
    const box = await field(page, step.field);
    await box.fill(step.value);
  },
  async settled(page, step) {
    // Wait until Agent Chat UI has fetched the thread list after the thread began (it does, 4 s after a new thread
    // id: that redraws the card), then for two frames, so the redraw has happened.
    const deadline = Date.now() + TIMEOUT;
    while (!(network.threadCreated >= 0 && network.lastSearch > network.threadCreated)) {
      if (Date.now() > deadline) throw new Error("the thread list was not fetched after the thread began");
      await page.waitForEvent("requestfinished", { timeout: TIMEOUT });
    }
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  },
  async watch(page, step) {
    // Evidence, not synchronisation: for `ms` milliseconds, record every change of the card's boxes (and when the
    // card's title element is replaced, i.e. the card was drawn anew) with the time since the scenario began.
    const changes = [];
    const until = Date.now() + step.ms;
    let last = JSON.stringify(await cardFields(page).catch(() => ({})));
    changes.push({ t: Date.now() - T0, fields: JSON.parse(last) });
    while (Date.now() < until) {
      await page.waitForTimeout(20);
      const now = JSON.stringify(await cardFields(page).catch(() => ({})));
      if (now !== last) {
        changes.push({ t: Date.now() - T0, fields: JSON.parse(now) });
        last = now;
      }
    }
    step.changes = changes;
  },
  async toggle_tool_calls(page, step) {
    // Click the composer's "Hide Tool Calls" switch (it only changes the page's query string, not the thread).
    await page.getByRole("switch").first().click({ timeout: TIMEOUT });
  },
  async text(page, step) {
    // Wait until the page shows `text` (a substring of the visible text).
    await page.getByText(step.text, { exact: false }).first().waitFor({ timeout: TIMEOUT });
  },
  async count(page, step) {
    // Wait until the visible text holds `text` at least `n` times (a later turn's copy of the same line).
    await page.waitForFunction(
      ([text, n]) => document.body.innerText.split(text).length - 1 >= n,
      [step.text, step.n],
      { timeout: TIMEOUT },
    );
  },
  async gone(page, step) {
    await page.getByText(step.text, { exact: false }).first().waitFor({ state: "detached", timeout: TIMEOUT });
  },
  async reload(page, step) {
    // Reload the page (same thread id in the URL) and wait for `text` to show again.
    await page.reload({ timeout: TIMEOUT });
    await page.getByText(step.text, { exact: false }).first().waitFor({ timeout: TIMEOUT });
  },
  async shot(page, step) {},
};

(async () => {
  const report = { ok: false, steps: [], toasts: [], console_errors: [] };
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "lgmcp-chromium-"));
  let context;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: scenario.chromium,
      headless: true,
      args: [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
      ],
      viewport: { width: 1280, height: 2200 }, // tall enough that a whole card fits in a screenshot
    });
    if (scenario.ui_assets_from) {
      // The generative UI bundle is served under root-relative URLs (/ui/<graph>/...): fetch them from the API.
      const base = new URL(scenario.url);
      await context.route(
        (url) => url.origin === base.origin && url.pathname.startsWith("/ui/"),
        async (route) => {
          const url = new URL(route.request().url());
          const response = await route.fetch({ url: scenario.ui_assets_from + url.pathname + url.search });
          await route.fulfill({ response });
        },
      );
    }
    const page = context.pages()[0] || (await context.newPage());
    page.on("console", (m) => { if (m.type() === "error") report.console_errors.push(m.text().slice(0, 500)); });
    report.requests = [];
    const t0 = T0;
    page.on("requestfinished", (r) => {
      const url = r.url().replace(/^https?:\/\/[^/]+/, "");
      if (!/\/(threads|runs|history|state)/.test(url)) return;
      const at = Date.now() - t0;
      report.requests.push({ t: at, method: r.method(), url });
      if (r.method() === "POST" && /\/threads$/.test(url)) network.threadCreated = at;
      if (/\/threads\/search/.test(url)) network.lastSearch = at;
    });
    if (process.env.LGMCP_DRIVE_CONSOLE) {
      report.console = [];
      page.on("console", (m) => report.console.push(`[${m.type()}] ${m.text().slice(0, 400)}`));
    }
    let n = 0;
    for (const step of scenario.steps) {
      n += 1;
      const entry = { do: step.do, step };
      report.steps.push(entry);
      try {
        await verbs[step.do](page, step);
      } finally {
        entry.text = await page.locator("body").innerText().catch(() => "");
        const toasts = await page.locator("[data-sonner-toast]").allInnerTexts().catch(() => []);
        entry.toasts = toasts;
        entry.fields = await cardFields(page).catch(() => ({}));
        entry.url = page.url();
        if (step.do === "app_facts") entry.app = await appFacts(page);
        if (step.do === "shot" || step.shot) {
          const name = `${scenario.name}-${String(n).padStart(2, "0")}-${step.shot || step.name || step.do}.png`;
          entry.shot = path.join(scenario.artifacts, name);
          await page.screenshot({ path: entry.shot, fullPage: true });
        }
      }
    }
    report.ok = true;
  } catch (error) {
    report.error = String(error && error.stack ? error.stack : error);
    if (context) {
      const page = context.pages()[0];
      if (page) {
        const shot = path.join(scenario.artifacts, `${scenario.name}-FAILED.png`);
        await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
        report.failed_shot = shot;
      }
    }
  } finally {
    if (context) await context.close().catch(() => {});
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
  // The report goes to a file beside the scenario (stdout is a pipe: a large write could be cut by process.exit).
  fs.writeFileSync(process.argv[2].replace(/\.json$/, "") + ".out.json", JSON.stringify(report));
  process.exit(report.ok ? 0 : 1);
})();
