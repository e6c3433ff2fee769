// E2bIT's client: the official e2b SDK, pointed at Stasis by its own settings only
// (E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY), goes through commands, files, pause and connect.
// Prints "ok: <what>" per check and "session ok" at the end; exits 1 at the first failure.
import { Sandbox, CommandExitError, FileNotFoundError, NotFoundError, AuthenticationError, TimeoutError } from 'e2b'
import http from 'node:http'

const template = process.env.E2B_TEMPLATE ?? 'base'
let failed = false
function check(condition, what) {
  if (!condition) {
    console.error('FAILED: ' + what)
    failed = true
    throw new Error('check failed: ' + what)
  }
  console.log('ok: ' + what)
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
// A GET of http://HOST/ sent to the loopback with that Host: the preview domain's names need no DNS here.
function getByHost(host, headers = {}) {
  const port = Number(host.slice(host.lastIndexOf(':') + 1))
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/', headers: { ...headers, Host: host } }, (response) => {
      let body = ''
      response.on('data', (chunk) => (body += chunk))
      response.on('end', () => resolve({ status: response.statusCode, body }))
    })
    request.on('error', reject)
  })
}
async function until(what, condition, ms = 10_000) {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) check(false, what + ' within ' + ms + ' ms')
    await sleep(100)
  }
  check(true, what)
}

const sbx = await Sandbox.create(template, { metadata: { suite: 'e2b-it' }, envs: { GREETING: 'hi' }, timeoutMs: 600_000 })
try {
  check(sbx.sandboxId.length > 0, 'created ' + sbx.sandboxId)
  check(await sbx.isRunning(), 'isRunning')

  // Commands: as the default user in its home, environment from create, stdout and stderr apart.
  const first = await sbx.commands.run('echo $GREETING; echo err >&2; whoami; pwd')
  check(first.exitCode === 0, 'exit code 0')
  check(first.stdout === 'hi\nuser\n/home/user\n', 'stdout as user in its home: ' + JSON.stringify(first.stdout))
  check(first.stderr === 'err\n', 'stderr: ' + JSON.stringify(first.stderr))
  check((await sbx.commands.run('whoami', { user: 'root' })).stdout === 'root\n', 'root on request')
  check((await sbx.commands.run('echo $X; pwd', { envs: { X: 'per-command' }, cwd: '/tmp' })).stdout === 'per-command\n/tmp\n', 'envs and cwd of one command')
  try {
    await sbx.commands.run('echo before; exit 3')
    check(false, 'a failing command throws')
  } catch (e) {
    check(e instanceof CommandExitError && e.exitCode === 3 && e.stdout === 'before\n', 'CommandExitError with exit code 3: ' + e)
  }
  const chunks = []
  await sbx.commands.run('for i in 1 2 3; do echo line$i; sleep 0.2; done', { onStdout: (d) => chunks.push(d) })
  check(chunks.join('') === 'line1\nline2\nline3\n', 'onStdout as the output comes: ' + JSON.stringify(chunks))

  // Background commands: listed, given input, killed.
  const sleeper = await sbx.commands.run('sleep 600', { background: true })
  check((await sbx.commands.list()).some((p) => p.pid === sleeper.pid), 'list shows the background command')
  check(await sbx.commands.kill(sleeper.pid), 'kill')
  const killed = await sleeper.wait().then(() => null, (e) => e)
  check(killed instanceof CommandExitError && killed.exitCode !== 0, 'a killed command ends with an error: ' + killed)
  check(!(await sbx.commands.kill(sleeper.pid)), 'killing an ended command says false')
  const reader = await sbx.commands.run('read line; echo got:$line', { background: true, stdin: true })
  await sbx.commands.sendStdin(reader.pid, 'hello\n')
  check((await reader.wait()).stdout === 'got:hello\n', 'stdin reaches a background command')

  // Ports: getHost names the sandbox's port at Stasis's preview listener, open to anyone as E2B's are.
  await sbx.files.write('site/index.html', 'served by the sandbox')
  await sbx.commands.run('cd site && python3 -m http.server 8000', { background: true, timeoutMs: 0 })
  const host = sbx.getHost(8000)
  check(host.startsWith('8000-' + sbx.sandboxId + '.'), 'getHost: ' + host)
  await until('getHost reaches the server', async () => {
    const answer = await getByHost(host).catch(() => null)
    return answer !== null && answer.status === 200 && answer.body === 'served by the sandbox'
  })

  // A command's timeout kills it, as envd does.
  const late = await sbx.commands.run('sleep 30; echo never', { timeoutMs: 1000 }).then(() => null, (e) => e)
  check(late instanceof TimeoutError, 'a command past its timeout: ' + late)
  await until('and it was killed', async () => !(await sbx.commands.list()).some((p) => p.args.join(' ').includes('sleep 30')))

  // A terminal: input, output, resize.
  const screen = []
  const term = await sbx.pty.create({ cols: 100, rows: 30, onData: (d) => screen.push(Buffer.from(d).toString()) })
  await sbx.pty.sendInput(term.pid, new TextEncoder().encode('echo pty-$((40+2)); stty size\n'))
  await until('the terminal answers', () => screen.join('').includes('pty-42') && screen.join('').includes('30 100'))
  await sbx.pty.resize(term.pid, { cols: 120, rows: 40 })
  await sbx.pty.sendInput(term.pid, new TextEncoder().encode('stty size; exit\n'))
  await term.wait().catch(() => null)
  check(screen.join('').includes('40 120'), 'a resized terminal: ' + JSON.stringify(screen.join('').slice(-200)))

  // Files: relative to the user's home, the user's own, binary safe; list, mkdir, rename, remove, stat, watch.
  await sbx.files.write('notes/hello.txt', 'hello file')
  check((await sbx.files.read('notes/hello.txt')) === 'hello file', 'a relative path reads back')
  check((await sbx.files.read('/home/user/notes/hello.txt')) === 'hello file', 'the same file by its absolute path')
  const owner = await sbx.commands.run('stat -c %U notes/hello.txt notes; echo more >> notes/hello.txt')
  check(owner.stdout === 'user\nuser\n', 'a written file and the directory it made are the user\'s: ' + JSON.stringify(owner.stdout))
  const bytes = Uint8Array.from({ length: 256 }, (_, i) => i)
  await sbx.files.write('bin.dat', bytes)
  const back = await sbx.files.read('bin.dat', { format: 'bytes' })
  check(back.length === 256 && back.every((b, i) => b === i), 'binary content round trip')
  const entries = await sbx.files.list('notes')
  check(entries.length === 1 && entries[0].name === 'hello.txt' && entries[0].type === 'file', 'list: ' + JSON.stringify(entries))
  check((await sbx.files.getInfo('bin.dat')).size === 256, 'getInfo size')
  check((await sbx.files.makeDir('made')) === true, 'makeDir makes')
  check((await sbx.files.makeDir('made')) === false, 'makeDir of an existing directory says false')
  await sbx.files.rename('notes/hello.txt', 'made/moved.txt')
  check(await sbx.files.exists('made/moved.txt'), 'exists after rename')
  check(!(await sbx.files.exists('notes/hello.txt')), 'gone from where it was')
  await sbx.files.remove('made')
  check(!(await sbx.files.exists('made')), 'remove')
  const missing = await sbx.files.read('nope.txt').then(() => null, (e) => e)
  check(missing instanceof FileNotFoundError || missing instanceof NotFoundError, 'reading a missing file: ' + missing)
  const events = []
  const watch = await sbx.files.watchDir('/home/user', (e) => events.push(e))
  await sbx.files.write('watched.txt', 'x')
  await until('a watch event for a written file', () => events.some((e) => e.name === 'watched.txt'))
  await watch.stop()

  // Pause (standby) and connect: a background loop goes on where it was.
  // timeoutMs 0: no deadline (a command's default is 60 s, after which envd kills it)
  await sbx.commands.run('i=0; while true; do i=$((i+1)); echo $i > /tmp/count; sleep 0.1; done', { background: true, timeoutMs: 0 })
  await sleep(500)
  await sbx.pause()
  const paused = await Sandbox.list({ query: { state: ['paused'] } }).nextItems()
  check(paused.some((s) => s.sandboxId === sbx.sandboxId), 'listed as paused')
  const frozen = Number(await sbx.files.read('/tmp/count'))
  const again = await Sandbox.connect(sbx.sandboxId)
  check(again.sandboxId === sbx.sandboxId, 'connect')
  await until('the loop counts on after connect', async () => Number(await again.files.read('/tmp/count')) > frozen + 3)
  const metrics = await again.getMetrics()
  check(metrics.length === 1 && metrics[0].cpuCount > 0 && metrics[0].memUsed > 0 && metrics[0].memTotal >= metrics[0].memUsed &&
    metrics[0].diskUsed > 0 && metrics[0].diskTotal >= metrics[0].diskUsed,
    'getMetrics: ' + JSON.stringify(metrics))
  const info = await again.getInfo()
  check(info.metadata.suite === 'e2b-it' && info.templateId === template, 'getInfo: ' + JSON.stringify(info))
  await again.setTimeout(120_000)
  const running = await Sandbox.list({ query: { metadata: { suite: 'e2b-it' } } }).nextItems()
  check(running.length === 1 && running[0].state === 'running', 'listed by metadata: ' + JSON.stringify(running))

  // Fork: copies of the running sandbox, its memory and processes with them.
  await again.commands.run('echo parent-state > /tmp/state')
  const forks = await again.fork({ count: 2, timeoutMs: 120_000 })
  check(forks.length === 2 && forks.every((f) => f instanceof Sandbox), 'fork of 2: ' + forks)
  for (const fork of forks) {
    check((await fork.files.read('/tmp/state')) === 'parent-state\n', 'a fork has the parent\'s files')
    const before = Number(await fork.files.read('/tmp/count'))
    await until('a fork\'s copy of the loop counts on', async () => Number(await fork.files.read('/tmp/count')) > before + 3)
    await fork.kill()
  }

  // Snapshots: a create from one restores files, memory and processes, the snapshotted sandbox gone or not.
  const snap = await again.createSnapshot({ name: 'e2b-it-snap' })
  check(snap.snapshotId.length > 0 && snap.names.includes('e2b-it-snap'), 'createSnapshot: ' + JSON.stringify(snap))
  const listedSnaps = await Sandbox.listSnapshots({ sandboxId: again.sandboxId }).nextItems()
  check(listedSnaps.some((s) => s.snapshotId === snap.snapshotId), 'listSnapshots: ' + JSON.stringify(listedSnaps))
  for (const from of [snap.snapshotId, 'e2b-it-snap']) {
    const restored = await Sandbox.create(from, { timeoutMs: 120_000 })
    check((await restored.files.read('/tmp/state')) === 'parent-state\n', 'created from snapshot ' + from)
    const at = Number(await restored.files.read('/tmp/count'))
    await until('the restored loop counts on', async () => Number(await restored.files.read('/tmp/count')) > at + 3)
    await restored.kill()
  }
  check(await Sandbox.deleteSnapshot(snap.snapshotId), 'deleteSnapshot')
  check(!(await Sandbox.deleteSnapshot(snap.snapshotId)), 'a deleted snapshot is gone')

  // Network: no internet at create; rules replaced later; ports reached with the traffic token only.
  const offline = await Sandbox.create(template, { allowInternetAccess: false, network: { allowPublicTraffic: false }, timeoutMs: 120_000 })
  try {
    await offline.commands.run('mkdir -p /tmp/www && echo private > /tmp/www/index.html && cd /tmp/www && python3 -m http.server 8001',
      { background: true, timeoutMs: 0 })
    const privateHost = offline.getHost(8001)
    await until('a private port answers with the traffic token', async () => {
      const answer = await getByHost(privateHost, { 'E2b-Traffic-Access-Token': offline.trafficAccessToken }).catch(() => null)
      return answer !== null && answer.status === 200 && answer.body === 'private\n'
    })
    check((await getByHost(privateHost)).status === 401, 'and is refused without it')
    const lookup = await offline.commands.run('getent hosts example.com || echo none')
    check(lookup.stdout === 'none\n', 'no internet: names do not resolve: ' + JSON.stringify(lookup.stdout))
    await offline.updateNetwork({ allowOut: ['example.com'], denyOut: ['0.0.0.0/0'] })
    const policy = await (await fetch(process.env.STASIS_URL + '/v1/sandboxes/' + offline.sandboxId + '/network',
      { headers: { Authorization: 'Bearer ' + process.env.E2B_API_KEY } })).json()
    check(policy.egress.default === 'deny' && policy.egress.allow.includes('example.com'), 'updateNetwork: ' + JSON.stringify(policy.egress))
  } finally {
    await offline.kill()
  }

  // Timeouts: one that kills, and one that pauses (processes kept) and is given again when a call wakes the sandbox.
  const brief = await Sandbox.create(template, { timeoutMs: 2_000 })
  check((await brief.getInfo()).lifecycle.onTimeout === 'kill', 'a timeout kills by default')
  await until('killed at its timeout', async () => !(await brief.isRunning()) && !(await Sandbox.list().nextItems()).some((s) => s.sandboxId === brief.sandboxId), 20_000)
  const napper = await Sandbox.create(template, { timeoutMs: 4_000, lifecycle: { onTimeout: 'pause', autoResume: true } })
  try {
    check((await napper.getInfo()).lifecycle.onTimeout === 'pause', 'getInfo: onTimeout pause')
    await napper.commands.run('i=0; while true; do i=$((i+1)); echo $i > /tmp/n; sleep 0.2; done', { background: true, timeoutMs: 0 })
    await until('paused at its timeout', async () => (await napper.getInfo()).state === 'paused', 20_000)
    const asleep = Number(await napper.files.read('/tmp/n')) // a call wakes it
    check((await napper.getInfo()).state === 'running', 'a call wakes it')
    await until('its loop counts on', async () => Number(await napper.files.read('/tmp/n')) > asleep + 3)
    const endAt = (await napper.getInfo()).endAt.getTime()
    check(endAt > Date.now() && endAt < Date.now() + 5_000, 'woken with its timeout again: ends ' + new Date(endAt).toISOString())
    await until('paused again at that timeout', async () => (await napper.getInfo()).state === 'paused', 20_000)
    const back = await Sandbox.connect(napper.sandboxId, { timeoutMs: 60_000 })
    const later = (await back.getInfo()).endAt.getTime()
    check(later > Date.now() + 50_000, 'connect sets its own timeout')
  } finally {
    await napper.kill()
  }

  // Errors as the SDK's own.
  const badKey = await Sandbox.create(template, { apiKey: 'e2b_' + '0'.repeat(40) }).then(() => null, (e) => e)
  check(badKey instanceof AuthenticationError, 'a wrong key: ' + badKey)
} finally {
  await sbx.kill()
}
check(!(await Sandbox.kill(sbx.sandboxId)), 'a killed sandbox is gone')
console.log(failed ? 'session failed' : 'session ok')
