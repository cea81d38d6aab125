/// Lesson 11: many connections at once. The file is split into byte ranges, fetched side by side
/// on several connections, as download managers do (aria2c `-x`/`-s`) and apps that fetch large
/// media: where a server or a CDN paces each connection, more connections go faster.
///
/// There is no one source article: the article variant is the way blog posts write it, one data
/// task per range on one session, every range written through one shared `FileHandle`.
/// `--connections N` sets the number of ranges and connections (4 by default; 1 is one stream).
/// The default faults pace each connection to 16 MiB/s and break the first range at 40%.
///
/// Article.swift keeps that way, defects included; Corrected.swift fixes it, with the plan of
/// ranges in Corrected+Plan.swift. Read Lessons/11-segmented.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit

Lesson(.segmented).run { run in
    switch run.variant {
    case .article: articleVariant(run)
    case .corrected: correctedVariant(run)
    }
}
