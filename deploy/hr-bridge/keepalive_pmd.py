"""Polar Measurement Data (PMD): the accelerometer stream of a Polar H10 chest strap.

Polar documents the protocol in its open polar-ble-sdk (documentation/products/PolarH10.md and
the SDK's PMD client): a GATT service with a control point and a data characteristic.

- Control point (write, indicate): `[op, measurement type, (setting type, count, value…)…]`;
  op 1 = get settings, 2 = start, 3 = stop; measurement type 2 = acceleration. Settings: 0 sample
  rate (uint16, Hz), 1 resolution (uint16, bits), 2 range (uint16, g), 3 range in milli-units
  (uint32), 4 channels (uint8), 5 factor (float32). The answer is indicated on the control point:
  `[0xF0, op, measurement type, status, more, settings…]`, status 0 = success.
- Data (notify): `[measurement type, timestamp (uint64 ns, sensor clock, of the frame's last
  sample), frame type, samples…]`. Frame type bit 7 set = compressed ("delta") frame; bits 0–6
  the sample layout: for acceleration 0 = int8, 1 = int16, 2 = int24 per axis, x y z, mG.
  A compressed frame holds one reference sample (int16 per axis) and blocks of
  `[bit width, count, count × 3 × width bits, LSB first]` of signed differences.

The H10 streams acceleration at 25, 50, 100 or 200 Hz, ±2, 4 or 8 g, 16 bits, in mG.
"""
import struct

PMD_SERVICE = "fb005c80-02e7-f387-1cad-8acd2d8df0c8"
PMD_CONTROL = "fb005c81-02e7-f387-1cad-8acd2d8df0c8"
PMD_DATA = "fb005c82-02e7-f387-1cad-8acd2d8df0c8"

MEASUREMENT_ACC = 2
OP_GET_SETTINGS, OP_START, OP_STOP = 1, 2, 3
SAMPLE_RATE, RESOLUTION, RANGE, RANGE_MILLIUNIT, CHANNELS, FACTOR = range(6)
SETTING_SIZE = {SAMPLE_RATE: 2, RESOLUTION: 2, RANGE: 2, RANGE_MILLIUNIT: 4, CHANNELS: 1, FACTOR: 4}
STATUS = ["success", "invalid op code", "invalid measurement type", "not supported", "invalid length",
          "invalid parameter", "already in state", "invalid resolution", "invalid sample rate",
          "invalid range", "invalid MTU", "invalid number of channels", "invalid state",
          "device in charger", "disk full"]
H10_ACC_RATES = (25, 50, 100, 200)


class PMDError(ValueError):
    pass


def start_acc_command(rate=50, resolution=16, range_g=8):
    """The control point write that starts the accelerometer stream."""
    command = bytes([OP_START, MEASUREMENT_ACC])
    for setting, value in ((SAMPLE_RATE, rate), (RESOLUTION, resolution), (RANGE, range_g)):
        command += bytes([setting, 1]) + value.to_bytes(SETTING_SIZE[setting], "little")
    return command


def stop_acc_command():
    return bytes([OP_STOP, MEASUREMENT_ACC])


def parse_settings(data):
    """{setting type: [values]} from the settings part of a control point answer (a lone byte
    there, as some answers carry, is no setting: Polar's SDK skips it too)."""
    settings, offset = {}, 0
    if len(data) <= 1:
        return settings
    while offset < len(data):
        if offset + 2 > len(data) or data[offset] not in SETTING_SIZE:
            raise PMDError("bad setting at byte %d" % offset)
        kind, count, offset = data[offset], data[offset + 1], offset + 2
        size = SETTING_SIZE[kind]
        if offset + count * size > len(data):
            raise PMDError("truncated setting %d" % kind)
        values = []
        for _ in range(count):
            chunk = bytes(data[offset:offset + size])
            values.append(struct.unpack("<f", chunk)[0] if kind == FACTOR else int.from_bytes(chunk, "little"))
            offset += size
        settings[kind] = values
    return settings


def parse_control_response(data):
    """(op, measurement type, status text, settings) of a control point indication."""
    if len(data) < 4 or data[0] != 0xF0:
        raise PMDError("not a control point answer: %s" % bytes(data).hex())
    status = STATUS[data[3]] if data[3] < len(STATUS) else "status %d" % data[3]
    settings = parse_settings(data[5:]) if data[3] == 0 and len(data) > 5 else {}
    return data[1], data[2], status, settings


def _signed(value, bits):
    return value - (1 << bits) if value & (1 << (bits - 1)) else value


def delta_decode(payload, channels=3, resolution=16):
    """Samples of a compressed frame: a reference sample, then blocks of bit-packed differences."""
    width = (resolution + 7) // 8
    if len(payload) < channels * width:
        raise PMDError("compressed frame shorter than its reference sample")
    sample = [_signed(int.from_bytes(payload[i * width:(i + 1) * width], "little"), width * 8) for i in range(channels)]
    samples, offset = [list(sample)], channels * width
    while offset < len(payload):
        if offset + 2 > len(payload):
            raise PMDError("truncated delta block header")
        bits, count = payload[offset], payload[offset + 1]
        offset += 2
        if bits == 0 or bits > 32:
            raise PMDError("delta width %d" % bits)
        length = (bits * count * channels + 7) // 8
        if offset + length > len(payload):
            raise PMDError("truncated delta block")
        packed = int.from_bytes(payload[offset:offset + length], "little")
        offset += length
        for index in range(count):
            for channel in range(channels):
                shift = (index * channels + channel) * bits
                sample[channel] += _signed((packed >> shift) & ((1 << bits) - 1), bits)
            samples.append(list(sample))
    return samples


def decode_acc_frame(data, factor=1.0):
    """(sensor timestamp of the last sample in ns, [[x, y, z] mG, …]) of a PMD ACC data frame."""
    if len(data) < 10:
        raise PMDError("frame shorter than its header")
    if data[0] != MEASUREMENT_ACC:
        raise PMDError("measurement type %d is not acceleration" % data[0])
    timestamp = int.from_bytes(data[1:9], "little")
    frame_type, payload = data[9], bytes(data[10:])
    if frame_type & 0x80:
        if frame_type & 0x7F not in (0, 1):
            raise PMDError("compressed frame type %d" % (frame_type & 0x7F))
        samples = delta_decode(payload, 3, 16)
        # Type 0 compressed frames carry g, not mG (the factor scales them).
        scale = factor * (1000 if frame_type & 0x7F == 0 else 1)
    else:
        width = {0: 1, 1: 2, 2: 3}.get(frame_type)
        if width is None:
            raise PMDError("frame type %d" % frame_type)
        if len(payload) % (3 * width):
            raise PMDError("%d bytes are not whole samples" % len(payload))
        samples = [[_signed(int.from_bytes(payload[i + axis * width:i + (axis + 1) * width], "little"), width * 8)
                    for axis in range(3)] for i in range(0, len(payload), 3 * width)]
        scale = factor
    if scale != 1.0:
        samples = [[int(round(value * scale)) for value in sample] for sample in samples]
    return timestamp, samples


class AccClock:
    """Places samples on the host's clock: one offset from the sensor clock, fixed at the first
    frame of a connection (so consecutive batches join without a gap), and the sample interval
    from consecutive frame timestamps (else from the nominal rate)."""

    def __init__(self, rate_hz):
        self.rate_hz, self.offset_ns, self.previous_ns = rate_hz, None, None

    def first_sample_ns(self, host_now_ns, frame_ns, count):
        if self.offset_ns is None:
            self.offset_ns = host_now_ns - frame_ns
        interval = 1e9 / self.rate_hz
        if self.previous_ns is not None and frame_ns > self.previous_ns and count:
            measured = (frame_ns - self.previous_ns) / count
            if 0.5 * interval < measured < 2 * interval:
                interval = measured
        self.previous_ns = frame_ns
        return int(frame_ns + self.offset_ns - (count - 1) * interval)
