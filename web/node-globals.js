// Node globals mqtt.js and its streams read (Buffer, process), from Debian's node-buffer and
// node-process; esbuild injects them into the bundle.
import { Buffer } from 'buffer';
import process from 'process';

export { Buffer, process };
