/// Where one record type's columns are in a statement's results, found by name when the
/// statement is first used (`SQLiteStatement.layout`): decoding a row then reads by index, as
/// cheaply as hard-coded positions, whatever order a SELECT lists its columns in.
protocol ColumnLayout {
    init(_ statement: SQLiteStatement) throws
}
