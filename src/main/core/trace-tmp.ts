export function tr(label: string): void {
  if (process.env.TRACE === '1') process.stderr.write(`TR ${(performance.timeOrigin + performance.now()).toFixed(3)} ${process.pid} ${label}\n`);
}
