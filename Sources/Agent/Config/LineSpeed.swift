import Foundation

/// The serial line speeds termios offers, by baud: what `[hr] baud` may be.
enum LineSpeed {
    static let termios: [Int: speed_t] = [
        1200: speed_t(B1200), 2400: speed_t(B2400), 4800: speed_t(B4800), 9600: speed_t(B9600), 19_200: speed_t(B19200),
        38_400: speed_t(B38400), 57_600: speed_t(B57600), 115_200: speed_t(B115200), 230_400: speed_t(B230400),
        460_800: speed_t(B460800), 921_600: speed_t(B921600), 1_000_000: speed_t(B1000000), 2_000_000: speed_t(B2000000),
        3_000_000: speed_t(B3000000), 4_000_000: speed_t(B4000000),
    ]
}
