/// Exercise 00: runs your Article.swift as `exercise-00-small-file`. Made by `lab exercise reset`.
import EmbeddedServer
import LabKit
import LabVocabulary

Lesson(.smallFile, program: .exercise).run { run in
    ArticleDownload(run)
}
