import { KubeConfig, ListWatch, Watch } from '@kubernetes/client-node';
globalThis.x = [KubeConfig, ListWatch, Watch];
