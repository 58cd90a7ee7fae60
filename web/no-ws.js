// mqtt.js uses the browser's WebSocket when it runs in a browser; Node's `ws` is never called.
module.exports = {};
