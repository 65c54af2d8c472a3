/// Fixed columns for a terminal table, measured in display columns (CJK characters count two):
/// text is cut with `…` to its column, numbers are right-aligned and never cut, columns are
/// separated by two spaces and trailing spaces are dropped.
package struct TextColumns {
    /// One column: title, width, and whether values are right-aligned (numbers).
    package struct Column {
        package let title: String
        package let width: Int
        package let right: Bool
    }

    /// The columns, left to right.
    package let columns: [Column]

    /// Columns from `(title, width, right-aligned)` triples.
    package init(_ columns: [(String, Int, Bool)]) {
        self.columns = columns.map { Column(title: $0.0, width: $0.1, right: $0.2) }
    }

    /// The title line.
    package var titleLine: String { line(columns.map(\.title)) }

    /// One line of `values` (missing values are blank).
    package func line(_ values: [String]) -> String {
        columns.enumerated().map { index, column in
            let value = index < values.count ? values[index] : ""
            if column.right {
                return String(repeating: " ", count: max(0, column.width - DisplayWidth.of(value))) + value
            }
            return DisplayWidth.pad(DisplayWidth.truncate(value, to: column.width), to: column.width)
        }.joined(separator: "  ").trimmingTrailingSpaces()
    }

    /// `text` broken into lines of at most `width` display columns at spaces (a longer word is cut
    /// where it must), at most `maxLines` lines, the last ending in `…` when text was left over.
    package static func wrap(_ text: String, width: Int, maxLines: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        var currentWidth = 0
        var rest = Substring(text.replacingOccurrences(of: "\n", with: " "))
        while !rest.isEmpty {
            let word = rest.prefix { $0 != " " }
            rest = rest.dropFirst(word.count).drop { $0 == " " }
            var piece = String(word)
            while !piece.isEmpty {
                let pieceWidth = DisplayWidth.of(piece)
                let gap = current.isEmpty ? 0 : 1
                if currentWidth + gap + pieceWidth <= width {
                    current += (gap == 1 ? " " : "") + piece
                    currentWidth += gap + pieceWidth
                    piece = ""
                } else if current.isEmpty {
                    // A word longer than the line: cut it.
                    var head = ""
                    var used = 0
                    for character in piece {
                        let w = DisplayWidth.of(character)
                        if used + w > width { break }
                        head.append(character)
                        used += w
                    }
                    lines.append(head)
                    piece = String(piece.dropFirst(head.count))
                } else {
                    lines.append(current)
                    current = ""
                    currentWidth = 0
                }
                if lines.count == maxLines {
                    let leftOver = !piece.isEmpty || !current.isEmpty || !rest.isEmpty
                    // "text …" when that fits, else the text cut to end in "…".
                    if leftOver { lines[maxLines - 1] = DisplayWidth.truncate(lines[maxLines - 1] + " …", to: width) }
                    return lines
                }
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }
}
