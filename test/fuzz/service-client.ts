/** The fuzz suites' side of ./service-process.ts: forks the service and asks it one thing at a time over IPC. */
import { fork, type ChildProcess } from 'node:child_process';

/** What the service process answers (see ./service-process.ts). */
export type Ask = 'delay' | 'heap' | 'jobs' | 'busy';

/** The forked service and a way to ask it one thing at a time. */
export interface ServiceProcess {
  url: string;
  smtpPort: number;
  apiKey: string;
  child: ChildProcess;
  ask<T>(type: Ask): Promise<T>;
  /** Closes the service and waits for its process to exit. */
  close(): Promise<void>;
}

/** Forks ./service-process.ts (with `env` added to its environment) and waits until it is ready. */
export async function startServiceProcess(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const child = fork(new URL('./service-process.ts', import.meta.url), [], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
  const ready = await new Promise<{ url: string; smtpPort: number; apiKey: string }>((resolve, reject) => {
    child.once('message', (message: { type: string; url: string; smtpPort: number; apiKey: string }) =>
      resolve(message),
    );
    child.once('exit', (code) => reject(new Error(`the service process exited at start (code ${code})`)));
  });
  let queue = Promise.resolve();
  const ask = <T>(type: Ask) => {
    const answer = queue.then(
      () =>
        new Promise<T>((resolve, reject) => {
          if (child.exitCode !== null || child.signalCode !== null)
            return reject(new Error(`the service process has exited (${child.exitCode ?? child.signalCode})`));
          const onExit = (code: number | null, signal: string | null) =>
            reject(new Error(`the service process exited (${code ?? signal})`));
          child.once('exit', onExit);
          child.once('message', (message: T) => {
            child.off('exit', onExit);
            resolve(message);
          });
          child.send({ type });
        }),
    );
    queue = answer.then(
      () => undefined,
      () => undefined,
    );
    return answer;
  };
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send({ type: 'close' });
    await exited;
  };
  return { ...ready, child, ask, close };
}
