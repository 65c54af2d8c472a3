/// RFC 4180 text parsed back into fields, for the tests of the CSV reports.
public enum CSVText {
    /// The fields of `text`, one array per line; a leading byte-order mark is skipped, CR LF and LF
    /// end records, and quoted fields may hold commas, quotes (doubled) and line breaks.
    public static func rows(_ text: String) -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = "", quoted = false
        var characters = Array(text.unicodeScalars.map(Character.init))
        if characters.first == "\u{FEFF}" { characters.removeFirst() }
        var i = 0
        while i < characters.count {
            let c = characters[i]
            if quoted {
                if c == "\"" {
                    if i + 1 < characters.count, characters[i + 1] == "\"" { field.append("\""); i += 1 } else { quoted = false }
                } else { field.append(c) }
            } else if c == "\"" { quoted = true }
            else if c == "," { row.append(field); field = "" }
            else if c == "\r" {}
            else if c == "\n" { row.append(field); rows.append(row); row = []; field = "" }
            else { field.append(c) }
            i += 1
        }
        return rows
    }
}
