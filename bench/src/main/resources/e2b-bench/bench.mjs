// The bench's e2b scenario: round trips of the official e2b SDK against Stasis (E2B_API_URL,
// E2B_SANDBOX_URL, E2B_API_KEY), printed as one JSON line of milliseconds per operation.
import { Sandbox } from 'e2b'

const creates = Number(process.env.BENCH_CREATES ?? 10)
const runs = Number(process.env.BENCH_RUNS ?? 50)
const warmup = Number(process.env.BENCH_WARMUP ?? 1)
const template = process.env.BENCH_TEMPLATE ?? 'base'
const times = { create: [], run: [], pause_connect: [] }
const timed = async (action) => {
  const start = performance.now()
  const result = await action()
  return [performance.now() - start, result]
}

for (let i = 0; i < warmup + creates; i++) {
  const [create, sandbox] = await timed(() => Sandbox.create(template, { timeoutMs: 600_000 }))
  try {
    const [pauseConnect] = await timed(async () => {
      await sandbox.pause()
      await Sandbox.connect(sandbox.sandboxId)
    })
    if (i >= warmup) {
      times.create.push(create)
      times.pause_connect.push(pauseConnect)
    }
    if (i === warmup) {
      for (let r = 0; r < warmup + runs; r++) {
        const [run] = await timed(() => sandbox.commands.run('true'))
        if (r >= warmup) times.run.push(run)
      }
    }
  } finally {
    await sandbox.kill()
  }
}
console.log(JSON.stringify(times))
