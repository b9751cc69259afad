import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig, ListWatch, type KubernetesListObject, type KubernetesObject, type Watch } from '@kubernetes/client-node';
import type { SnapshotClass } from '../schemas/types.js';
import { ApiserverError } from './apiserver-error.js';
import type { ClassResource, ClassWatch, ClusterApi, WatchHandlers } from './cluster-api.js';
import type { EventSink } from './denial-events.js';
import { kubeExchange, kubeRequest } from './kube-http.js';
import { HttpsWatch } from './kube-watch.js';

/** Loads the kubeconfig: the file given, else $KUBECONFIG, else the in-cluster service account. */
export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path === undefined) {
    kc.loadFromDefault();
    return kc;
  }
  try {
    kc.loadFromFile(path);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot load the kubeconfig ${path} (--kubeconfig, or KUBECONFIG): ${reason}`, { cause: error });
  }
  return kc;
}

/**
 * The apiserver ends each watch after this long (server-side timeout) and the informer watches again from where
 * it was: a stream that died without a word is replaced within a minute, and the end itself (or a bookmark, where
 * the apiserver sends them) keeps a quiet watch talking, so silence is a sign of trouble (class-watchers.ts).
 */
export const WATCH_TIMEOUT_S = 60;

/**
 * How long a watch may say nothing before it is given up (a TimeoutError, which the informer answers by watching
 * again at once). A quiet kind's watch says nothing until the server-side timeout ends it: 1.20 sends it no
 * bookmark at all. client-node's 30 s cut each such watch at half-time and opened a new connection twice a
 * minute for every quiet kind; past the server-side timeout, silence means a dead stream.
 */
export const WATCH_SILENCE_MS = (WATCH_TIMEOUT_S + 15) * 1000;

/**
 * The informer's wait before it watches again after a watch that ended cleanly. client-node doubles it after each
 * such end without an event between, up to 30 s: a quiet kind, whose watch the server ends each minute, would go
 * unwatched for up to 30 s of every 90, and past the 90 s that class-watchers.ts takes for a dead stream. 1 s
 * still keeps a server that ends every watch at once from a tight loop.
 */
export const WATCH_AGAIN_MAX_MS = 1_000;
const waitToWatchAgain = (ms: number): Promise<void> => sleep(Math.min(ms, WATCH_AGAIN_MAX_MS));

/**
 * A watch with a server-side timeout and bookmarks, telling `alive` of every event and every end. Once `stopped`,
 * it opens no watch and closes one that was connecting: client-node's ListWatch checks for stop() only before its
 * wait to watch again, so a stop() during that wait, or while a watch connects, would leave a watch open for up to
 * its minute.
 */
function talkativeWatch(kc: KubeConfig, alive: () => void, stopped: () => boolean): Watch {
  const watch = new HttpsWatch(kc, WATCH_SILENCE_MS);
  const original = watch.watch.bind(watch);
  watch.watch = async (path, params, callback, done) => {
    if (stopped()) return new AbortController();
    const controller = await original(
      path,
      { ...params, timeoutSeconds: WATCH_TIMEOUT_S, allowWatchBookmarks: true },
      (phase, object, raw) => {
        alive();
        callback(phase, object, raw);
      },
      (error) => {
        alive();
        done(error);
      },
    );
    if (stopped()) controller.abort();
    return controller;
  };
  return watch;
}

/** The ClusterApi of a real cluster, through @kubernetes/client-node's informer machinery (ListWatch). */
export function clientNodeApi(kc: KubeConfig): ClusterApi {
  return {
    async servedGroups() {
      const list = await kubeRequest<{ groups: { name: string; preferredVersion?: { version: string } }[] }>(kc, 'GET', '/apis');
      return new Map(
        list.groups.flatMap((g) => (g.preferredVersion === undefined ? [] : [[g.name, g.preferredVersion.version] as const])),
      );
    },
    watchClasses(resource: ClassResource, handlers: WatchHandlers): ClassWatch {
      const path = `/apis/${resource.group}/${resource.version}/${resource.plural}`;
      const list = async (): Promise<KubernetesListObject<KubernetesObject>> => {
        const result = await kubeRequest<KubernetesListObject<KubernetesObject>>(kc, 'GET', path);
        handlers.listed(result.items as SnapshotClass[]);
        return result;
      };
      const alive = (): void => handlers.alive?.();
      let stopped = false;
      const watch = talkativeWatch(kc, alive, () => stopped);
      const informer = new ListWatch<KubernetesObject>(path, watch, list, false, undefined, undefined, {
        delayFn: waitToWatchAgain,
      });
      informer.on('connect', alive);
      informer.on('add', (o) => handlers.upserted(o as SnapshotClass));
      informer.on('update', (o) => handlers.upserted(o as SnapshotClass));
      informer.on('delete', (o) => handlers.deleted(o as SnapshotClass));
      informer.on('error', (error: unknown) => handlers.failed(ApiserverError.from(error)));
      return {
        start: () => informer.start().catch((error: unknown) => Promise.reject(ApiserverError.from(error))),
        stop: () => {
          stopped = true;
          void informer.stop();
        },
      };
    },
    async probe(resource: ClassResource, timeoutMs: number) {
      await kubeExchange(
        kc,
        'GET',
        `/apis/${resource.group}/${resource.version}/${resource.plural}?limit=1`,
        undefined,
        timeoutMs,
      );
    },
  };
}

/** How long one Event write may take: a slow or frozen apiserver must not hold the queue or the shutdown. */
export const EVENT_TIMEOUT_MS = 3_000;

/** Writes core/v1 Events (denial events on the objects). */
export function eventSink(kc: KubeConfig): EventSink {
  return {
    create: async (event) => {
      const body = { apiVersion: 'v1', kind: 'Event', ...event };
      const path = `/api/v1/namespaces/${encodeURIComponent(event.metadata.namespace)}/events`;
      await kubeExchange(kc, 'POST', path, body, EVENT_TIMEOUT_MS);
    },
  };
}
