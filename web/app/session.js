// The page's MQTT v5 session over WebSockets: login, subscriptions, and requests answered on
// the agent's request/response (Response Topic + Correlation Data, docs/contract.md).
(function (KA) {
  "use strict";
  var M = window.KeepAliveMQTT;
  var session = KA.session = { client: null, replyTopic: null, handlers: [] };
  var pending = new Map();
  var sequence = 0;

  // CONNACK reason codes (MQTT 5.0, 3.2.2.2) a person can act on. mosquitto 2.0 answers a wrong
  // password with 135 (not authorised), not 134: both say the same to the person.
  var WRONG = "Wrong user name or password: the broker refused the login.";
  var REFUSALS = {
    134: WRONG,
    135: WRONG,
    136: "The broker is unavailable.",
    138: "This account is banned.",
    140: "The broker refused this way of logging in.",
  };

  session.brokerURL = function () {
    var configured = KA.settings.broker;
    if (configured) return configured;
    return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/";
  };

  // Resolves once connected; rejects with a sentence to show.
  session.connect = function (user, password) {
    var clientId = "page-" + user.replace(/[^A-Za-z0-9_-]/g, "") + "-" + Math.random().toString(16).slice(2, 10);
    // Replies come to reply/<who answers>/<who asked>/<client id>: the shape the fleet's ejabberd
    // rules allow (docs/fleet.md), and the Pi's page ACL too (reply/+/page/#).
    session.user = user;
    session.clientId = clientId;
    session.replyFilter = "reply/+/" + user + "/" + clientId;
    return new Promise(function (resolve, reject) {
      var settled = false, connected = false;
      var client = M.mqtt.connect(session.brokerURL(), {
        protocolVersion: 5, clientId: clientId, username: user, password: password, clean: true,
        reconnectPeriod: 0, connectTimeout: 8000, keepalive: 30,
      });
      // The broker's CONNACK reason code as it arrived on the WebSocket. mqtt.js destroys its
      // stream when the socket closes, dropping bytes not yet parsed; mosquitto closes right after
      // refusing a login, so on a busy machine mqtt.js may never see the refusal (seen: "Cannot
      // reach the broker" for a wrong password). The first byte of the first frame says whether it
      // is a CONNACK (0x20); after the remaining length (1-4 bytes) and the flags byte comes the code.
      var refusal = null;
      var socket = client.stream && client.stream.socket;
      if (socket && socket.addEventListener) {
        socket.addEventListener("message", function (event) {
          if (settled || refusal !== null || !(event.data instanceof ArrayBuffer)) return;
          var bytes = new Uint8Array(event.data), at = 1;
          if (bytes[0] !== 0x20) return;
          while (at < 4 && bytes[at] & 0x80) at++;
          refusal = session.refusal = bytes[at + 2] === undefined ? null : bytes[at + 2];
        });
      }
      function fail(sentence) {
        if (settled) return;
        settled = true;
        client.end(true);
        reject(new Error(sentence));
      }
      client.on("connect", function () {
        if (settled) return;
        settled = true;
        connected = true;
        // Once logged in, a lost connection is retried; a refused login is not.
        client.options.reconnectPeriod = 3000;
        session.client = client;
        client.subscribe(session.replyFilter, { qos: 0 });
        resolve();
      });
      client.on("error", function (error) {
        var sentence = REFUSALS[error.code] || ("The broker refused the login: " + error.message);
        if (!settled) fail(sentence);
      });
      client.on("close", function () {
        if (!settled && refusal >= 0x80) fail(REFUSALS[refusal] || ("The broker refused the login (reason code " + refusal + ")."));
        else if (!settled) fail("Cannot reach the broker at " + session.brokerURL() + ".");
        else if (connected) KA.connectionChanged(false);
      });
      client.on("connect", function () { if (settled) KA.connectionChanged(true); });
      client.on("message", received);
    });
  };

  function received(topic, payload, packet) {
    var text = new TextDecoder().decode(payload);
    var parts = topic.split("/");
    if (parts.length === 4 && parts[0] === "reply" && parts[2] === session.user && parts[3] === session.clientId) {
      var properties = packet.properties || {};
      var id = properties.correlationData ? new TextDecoder().decode(properties.correlationData) : "";
      var waiting = pending.get(id);
      if (!waiting) return;
      pending.delete(id);
      clearTimeout(waiting.timer);
      waiting.resolve({ text: text, status: Number((properties.userProperties || {}).status) || 200 });
      return;
    }
    session.handlers.forEach(function (handler) {
      var match = topic.match(handler.pattern);
      if (match) handler.callback(match, text, packet);
    });
  }

  // Subscribes to an MQTT filter; `pattern` picks this subscription's messages from all received.
  session.follow = function (filter, pattern, callback) {
    session.handlers.push({ pattern: pattern, callback: callback });
    session.client.subscribe(filter, { qos: 0 });
  };

  // Sends a request to `answerer` (a device id, or "archive") and resolves with its reply
  // {text, status}; rejects after the timeout.
  session.ask = function (topic, body, answerer) {
    var id = "q" + (++sequence) + "-" + Date.now();
    return new Promise(function (resolve, reject) {
      var timer = setTimeout(function () {
        pending.delete(id);
        reject(new Error("No answer on " + topic + " within " + KA.settings.replyTimeoutMs / 1000 + " s: is the agent running and connected?"));
      }, KA.settings.replyTimeoutMs);
      pending.set(id, { resolve: resolve, timer: timer });
      session.client.publish(topic, JSON.stringify(body), {
        qos: 0, properties: { responseTopic: "reply/" + answerer + "/" + session.user + "/" + session.clientId, correlationData: M.Buffer.from(id), contentType: "application/json" },
      });
    });
  };
})(window.KeepAlivePage);
