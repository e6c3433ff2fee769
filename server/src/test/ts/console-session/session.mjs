// The web console in a real browser, run by ConsoleIT: playwright-core drives Debian's chromium
// through sign-in, a live list, a sandbox's terminal, files, hibernation, a fork and the operator's
// pages, and checks that a wrong key and another tenant's sandbox are refused. A screenshot of
// each page goes to STASIS_SCREENSHOTS. Env: STASIS_URL, STASIS_ROOT_KEY, STASIS_OTHER_KEY,
// STASIS_CHROMIUM. Prints one line per step; exits non-zero at the first step that fails.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';

const url = process.env.STASIS_URL;
const rootKey = process.env.STASIS_ROOT_KEY;
const otherKey = process.env.STASIS_OTHER_KEY;
const shots = process.env.STASIS_SCREENSHOTS;
mkdirSync(shots, { recursive: true });

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** The API itself, for what the test sets up or does from outside the browser. */
async function api(method, path, body) {
  const response = await fetch(url + path, {
    method,
    headers: { Authorization: `Bearer ${rootKey}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  check(response.ok, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
  return response.status === 204 ? null : response.json();
}

const browser = await chromium.launch({ executablePath: process.env.STASIS_CHROMIUM, args: ['--no-sandbox'] });
const problems = [];
const made = [];
try {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes('status of 4')) problems.push(`console error: ${m.text()}`);
  });
  // Each page is kept as a picture, and must not show a value the code failed to format.
  const shot = async (name) => {
    await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
    const text = await page.evaluate(() => document.body.innerText);
    for (const slip of ['[object ', 'undefined', 'NaN', 'Invalid Date']) if (text.includes(slip)) problems.push(`${name} shows "${slip}"`);
  };

  // --- sign-in: a wrong key is refused, the root key goes in ---
  await page.goto(url + '/');
  await page.waitForURL(/\/console\/#\/sign-in$/);
  await page.getByLabel('API key or token').fill('sk_not_a_key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'not valid' }).waitFor();
  await shot('01-sign-in-refused');
  console.log('a wrong key is refused');
  const stored = await page.evaluate(() => [document.cookie, sessionStorage.getItem('stasis.credential')]);
  check(stored[0] === '' && stored[1] === null, `a refused key was kept: ${stored}`);

  await page.getByLabel('API key or token').fill(rootKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
  check(!page.url().includes(rootKey), 'the key is in the URL');
  check(await page.evaluate(() => document.cookie) === '', 'a cookie was set');
  console.log('signed in with the root key');

  // --- create a sandbox from the form; it shows in the list, running ---
  await page.getByLabel('Template').selectOption('tiny');
  await page.getByLabel('Name').first().fill('console-it');
  await page.getByRole('button', { name: 'Create' }).click();
  const row = page.locator('tr', { hasText: 'console-it' });
  await row.locator('[data-state="running"]').waitFor();
  const id = await row.getAttribute('data-id');
  made.push(id);
  await shot('02-sandboxes');
  console.log(`created ${id}`);

  // --- the list is live: a pause made elsewhere shows without a reload ---
  await api('POST', `/v1/sandboxes/${id}/pause`, {});
  await row.locator('[data-state="paused"]').waitFor();
  await api('POST', `/v1/sandboxes/${id}/resume`, {});
  await row.locator('[data-state="running"]').waitFor();
  console.log('the list followed a pause and a resume made through the API');

  // --- the terminal: type a command, read its answer ---
  await page.goto(`${url}/console/#/sandboxes/${id}/terminal`);
  await page.getByText(/connected to pid \d+/).waitFor();
  await page.locator('.xterm-helper-textarea').focus();
  await page.keyboard.type('echo hello-$((6*7))\n');
  await page.locator('.xterm-accessibility').filter({ hasText: 'hello-42' }).waitFor();
  await shot('03-terminal');
  console.log('the terminal answered');

  // --- files: write a file in the editor, see the watch event ---
  await page.getByRole('link', { name: 'Files' }).click();
  await page.getByRole('heading', { name: 'Changes (live)' }).waitFor();
  await page.getByRole('button', { name: 'New file' }).click();
  await page.getByLabel('Path').fill('/root/console-note.txt');
  await page.getByLabel('File content').fill('written in the console\n');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.locator('[data-change="create /root/console-note.txt"]').waitFor();
  await page.locator('button[data-path="/root/console-note.txt"]').waitFor(); // the listing follows the watch
  const content = await api('POST', `/v1/sandboxes/${id}/exec`, { cmd: ['cat', '/root/console-note.txt'] });
  check(content.stdout === 'written in the console\n', `the file holds ${JSON.stringify(content.stdout)}`);
  await shot('04-files');
  console.log('a file saved in the editor was seen by the watch and holds what was typed');

  // --- processes: a process's output followed live, and a signal that ends it ---
  const ticker = await api('POST', `/v1/sandboxes/${id}/processes`, { cmd: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo tick-$i; sleep 0.2; done'], tag: 'ticker' });
  await page.goto(`${url}/console/#/sandboxes/${id}/processes`);
  await page.getByRole('button', { name: String(ticker.pid), exact: true }).click();
  await page.locator('pre.log').filter({ hasText: 'tick-3' }).waitFor();
  await shot('05-processes');
  await page.locator('[data-signal="TERM"]').click();
  await page.locator('tr', { hasText: 'ticker' }).filter({ hasText: 'exited' }).waitFor();
  console.log('a process followed live, then ended by a signal from the page');

  // --- previews: a private one's link carries its token, shown once ---
  await page.goto(`${url}/console/#/sandboxes/${id}/previews`);
  await page.getByLabel('Port').fill('8000');
  await page.getByRole('button', { name: 'Open preview' }).click();
  await page.getByText('this link carries its token').waitFor();
  check(await page.locator('a[href*="stasis_preview_token="]').count() === 1, 'no link with the token');
  await shot('06-previews');
  console.log('a private preview opened from the page');

  // --- network and overview render ---
  for (const [tab, heading, name] of [['network', 'Egress policy', '07-network'], ['overview', 'Resources', '08-overview']]) {
    await page.goto(`${url}/console/#/sandboxes/${id}/${tab}`);
    await page.getByRole('heading', { name: heading }).waitFor();
    await shot(name);
  }
  console.log('the network and overview pages render');

  // --- hibernate from the page; the state follows; resume ---
  await page.locator('[data-action="hibernate"]').click();
  await page.locator('#sandbox-state [data-state="hibernated"]').waitFor({ timeout: 60_000 });
  await shot('09-hibernated');
  await page.locator('[data-action="resume"]').click();
  await page.locator('#sandbox-state [data-state="running"]').waitFor({ timeout: 60_000 });
  console.log('hibernated and resumed from the page');

  // --- fork, and see the tree ---
  await page.goto(`${url}/console/#/sandboxes/${id}/checkpoints`);
  await page.getByRole('heading', { name: 'Fork tree' }).waitFor();
  await page.getByRole('button', { name: 'Fork now' }).click();
  await page.locator('svg.fork-tree a[data-sandbox]').nth(1).waitFor({ timeout: 60_000 });
  const tree = await page.locator('svg.fork-tree a[data-sandbox]').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-sandbox')));
  const child = tree.find((node) => node !== id);
  check(tree.length === 2 && tree.includes(id) && child, `the tree shows ${tree}`);
  made.push(child);
  const forks = await api('GET', `/v1/sandboxes/${id}/forks`);
  check(forks.items.length === 1 && forks.items[0].id === child, `the API has the forks ${JSON.stringify(forks.items.map((s) => s.id))}`);
  await shot('10-fork-tree');
  console.log(`forked ${child}; the tree shows parent and child`);

  // --- the operator's pages ---
  for (const [tab, name] of [['tenants', '11-tenants'], ['templates', '12-templates'], ['blobs', '13-blobs'], ['nodes', '14-nodes']]) {
    await page.goto(`${url}/console/#/operators/${tab}`);
    await page.locator('section.panel :is(table, dl)').first().waitFor();
    await shot(name);
  }
  console.log('the operator pages render');

  // --- a scoped token opens its one sandbox, and offers no list or operator pages ---
  const token = await api('POST', '/v1/tokens', { scope: { sandbox: id }, permissions: ['sandbox:read', 'exec', 'files:read'] });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API key or token').fill(token.token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(new RegExp(`#/sandboxes/${id}$`));
  await page.getByRole('heading', { name: 'console-it' }).waitFor();
  check(await page.locator('[data-action]').count() === 0, 'a read-only token is offered lifecycle actions');
  check(await page.getByRole('link', { name: 'Operators' }).count() === 0, 'a token is offered the operator pages');
  await shot('15-scoped-token');
  await page.goto(`${url}/console/#/sandboxes`);
  await page.getByRole('alert').filter({ hasText: 'needs an API key' }).waitFor();
  console.log('a scoped token opens its one sandbox, and is told the list needs a key');

  // --- another tenant: its own list, never the root tenant's sandbox, no operator pages ---
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API key or token').fill(otherKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
  check(await page.locator(`tr[data-id="${id}"]`).count() === 0, 'another tenant lists the sandbox');
  check(await page.getByRole('link', { name: 'Operators' }).count() === 0, 'another tenant is offered the operator pages');
  await page.goto(`${url}/console/#/sandboxes/${id}`);
  await page.getByRole('heading', { name: 'Sandbox not found' }).waitFor();
  await shot('16-other-tenant-refused');
  console.log("another tenant cannot open the sandbox by its URL");

  check(problems.length === 0, `the browser reported: ${problems.join('; ')}`);
  console.log('session ok');
} finally {
  await browser.close();
  for (const sandbox of made.reverse()) await api('DELETE', `/v1/sandboxes/${sandbox}`).catch((e) => console.log(`cleanup: ${e.message}`));
}
