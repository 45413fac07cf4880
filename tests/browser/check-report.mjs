// check-report.mjs - opens a page of `fidx report` in Debian's Chromium (headless,
// driven by playwright-core) and says what it shows, for tests/e2e/t_report.py
// to compare with fidx du, fidx dupes and the names it made.
//
//   node check-report.mjs REPORT.html ZOOM_PATH [SCREENSHOT.png]
//
// Prints one JSON object: the totals the page shows (their exact values),
// the duplicates summary, the texts of the largest-files table, the first
// line of every treemap box's tooltip (its path), the zoom
// path after a click on the box of ZOOM_PATH and after a click on the
// first crumb, every console message and page error, every request other
// than the page itself, the alerts, and the <img>, <iframe> and <object>
// elements in the document (a hostile name must have made none).
// Exits 2 when the browser cannot be driven at all.
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [report, zoomPath, shot] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), 'fidx-chromium-'));
const out = { console: [], errors: [], requests: [], alerts: [] };
let context;
try {
	// The flags keep a sandboxed, offline machine quiet (no sign-in, updates, or network).
	context = await chromium.launchPersistentContext(profile, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		viewport: { width: 1280, height: 900 },
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	});
	const page = context.pages()[0] || await context.newPage();
	const url = pathToFileURL(report).href;
	page.on('console', (m) => out.console.push({ type: m.type(), text: m.text() }));
	page.on('pageerror', (e) => out.errors.push(String(e)));
	page.on('request', (r) => { if (r.url() !== url) out.requests.push(r.url()); });
	await page.addInitScript(() => {
		window.__alerts = [];
		for (const f of ['alert', 'confirm', 'prompt'])
			window[f] = (m) => { window.__alerts.push(String(m)); };
	});
	const started = Date.now();
	await page.goto(url, { waitUntil: 'load' });
	await page.waitForSelector('[data-testid=total-apparent]', { timeout: 20000 });
	out.load_ms = Date.now() - started;
	out.paint = await page.evaluate(() => {
		const p = performance.getEntriesByName('first-contentful-paint')[0];
		return p ? p.startTime : null;
	});
	const value = (id) => page.getAttribute(`[data-testid=${id}]`, 'data-value');
	out.totals = {
		apparent: await value('total-apparent'), allocated: await value('total-allocated'),
		entries: await value('total-entries'), errors: await value('total-errors'),
		waste: await value('total-waste'),
	};
	out.dupes = await page.evaluate(() => {
		const s = document.querySelector('[data-testid=dupes-summary]');
		return s ? { groups: s.dataset.groups, waste: s.dataset.waste, text: s.textContent } : null;
	});
	out.largest = await page.$$eval('[data-testid=largest] tbody tr td:last-child',
		(tds) => tds.map((td) => td.textContent));
	out.error_rows = await page.$$eval('[data-testid=errors] tbody tr',
		(trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
	out.diff = await page.evaluate(() => {
		const s = document.querySelector('[data-testid=diff-summary]');
		return s ? s.textContent : null;
	});
	out.crumbs_before = await page.getAttribute('[data-testid=crumbs]', 'data-path');
	out.boxes = await page.$$eval('#treemap .box', (b) => b.length);
	out.titles = await page.$$eval('#treemap .box', (b) => b.map((x) => x.title.split('\n')[0]));
	// Click the box of ZOOM_PATH: its title's first line is its path.
	const box = await page.evaluateHandle((p) => [...document.querySelectorAll('#treemap .box.dir')]
		.find((b) => b.title.split('\n')[0] === p) || null, zoomPath);
	if (await box.evaluate((b) => b !== null)) {
		await box.asElement().click({ position: { x: 3, y: 3 } });
		out.crumbs_zoomed = await page.getAttribute('[data-testid=crumbs]', 'data-path');
		out.note_zoomed = await page.textContent('[data-testid=zoom-note]');
		await page.click('[data-testid=crumbs] button >> nth=0');
		out.crumbs_back = await page.getAttribute('[data-testid=crumbs]', 'data-path');
	}
	out.injected = await page.$$eval('img, iframe, object, embed, script[src]', (e) => e.length);
	out.escapes = await page.$$eval('.esc', (e) => e.map((x) => x.textContent));
	out.alerts = await page.evaluate(() => window.__alerts);
	if (shot)
		await page.screenshot({ path: shot, fullPage: false });
	await context.close();
	context = null;
} catch (e) {
	out.fatal = String(e && e.stack || e);
}
if (context)
	await context.close().catch(() => {});
rmSync(profile, { recursive: true, force: true });
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(out.fatal ? 2 : 0);
