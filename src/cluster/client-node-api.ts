import { KubeConfig, ListWatch, Watch, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { SnapshotClass } from '../schemas/types.js';
import { ApiserverError } from './apiserver-error.js';
import type { ClassResource, ClassWatch, ClusterApi, WatchHandlers } from './cluster-api.js';
import type { EventSink } from './denial-events.js';
import { kubeExchange, kubeRequest } from './kube-http.js';

/** Loads the kubeconfig: the file given, else $KUBECONFIG, else the in-cluster service account. */
export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path !== undefined) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/**
 * The apiserver ends each watch after this long (server-side timeout) and the informer watches again from where
 * it was: a stream that died without a word is replaced within a minute, and bookmarks keep a quiet watch
 * talking, so silence itself is a sign of trouble (class-watchers.ts).
 */
export const WATCH_TIMEOUT_S = 60;

type RequestContext = Parameters<KubeConfig['applySecurityAuthentication']>[0];
type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/**
 * The watches' connection. client-node's Watch asks its KubeConfig for a new undici dispatcher, and so opens a new
 * TLS connection, each time a watch starts: every 60 s for each kind (client-node caches its https agents, not its
 * dispatchers). The watches of one kubeconfig share the first dispatcher made while they end cleanly. A watch that
 * ends with an error drops it, so the next one is made afresh from the kubeconfig as it is then (a rotated CA or
 * client certificate, an apiserver that went away).
 */
export class WatchConnection {
  private shared: Dispatcher | undefined;
  /** The kubeconfig to give client-node's Watch: the same, sharing one dispatcher. */
  readonly config: KubeConfig;

  constructor(kc: KubeConfig) {
    this.config = Object.create(kc) as KubeConfig;
    this.config.applySecurityAuthentication = async (context: RequestContext) => {
      await kc.applySecurityAuthentication(context);
      const made = context.getDispatcher();
      if (made === undefined) return;
      if (this.shared === undefined) {
        this.shared = made;
        return;
      }
      made.close().catch(() => undefined);
      context.setDispatcher(this.shared);
    };
  }

  /** After a watch failed: the next watch gets a new dispatcher; this one closes once its watches end. */
  drop(): void {
    const old = this.shared;
    this.shared = undefined;
    old?.close().catch(() => undefined);
  }
}

/** client-node's Watch with a server-side timeout and bookmarks, telling `alive` of every event and every end. */
function talkativeWatch(connection: WatchConnection, alive: () => void): Watch {
  const watch = new Watch(connection.config);
  const original = watch.watch.bind(watch);
  watch.watch = (path, params, callback, done) =>
    original(
      path,
      { ...params, timeoutSeconds: WATCH_TIMEOUT_S, allowWatchBookmarks: true },
      (phase, object, raw) => {
        alive();
        callback(phase, object, raw);
      },
      (error) => {
        if (error) connection.drop();
        alive();
        done(error);
      },
    );
  return watch;
}

/** The ClusterApi of a real cluster, through @kubernetes/client-node's informer machinery (ListWatch). */
export function clientNodeApi(kc: KubeConfig): ClusterApi {
  const connection = new WatchConnection(kc);
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
      const informer = new ListWatch<KubernetesObject>(path, talkativeWatch(connection, alive), list, false);
      informer.on('connect', alive);
      informer.on('add', (o) => handlers.upserted(o as SnapshotClass));
      informer.on('update', (o) => handlers.upserted(o as SnapshotClass));
      informer.on('delete', (o) => handlers.deleted(o as SnapshotClass));
      informer.on('error', (error: unknown) => handlers.failed(ApiserverError.from(error)));
      return {
        start: () => informer.start().catch((error: unknown) => Promise.reject(ApiserverError.from(error))),
        stop: () => void informer.stop(),
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
