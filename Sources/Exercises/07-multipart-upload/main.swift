/// Exercise 07: runs your Article.swift as `exercise-07-multipart-upload`. Made by `lab exercise reset`.
import EmbeddedServer
import LabKit
import LabVocabulary

Lesson(.multipartUpload, program: .exercise).run { run in
    ArticleUpload(run)
}
