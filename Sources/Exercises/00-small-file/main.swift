/// Exercise 00: runs your Article.swift as `exercise-00-small-file`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness
import LabVocabulary

Lesson(.smallFile, ways: SmallFileWay.self, program: .exercise).run(articleVariant)
