// The browser's MQTT client: Debian's node-mqtt (mqtt.js 4.3.7), bundled by web/build.sh with
// Debian's esbuild. In a browser mqtt.js talks through the browser's own WebSocket, so its Node
// `ws` dependency is aliased to nothing there.
import mqtt from 'mqtt/lib/connect/index.js';
import { Buffer } from 'buffer';

export { mqtt, Buffer };
