/// Exercise 07: runs your Article.swift as `exercise-07-multipart-upload`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness
import LabVocabulary

Lesson(.multipartUpload, ways: MultipartUploadWay.self, program: .exercise).run { run, _ in articleVariant(run) }
