/// Exercise 01: runs your Article.swift as `exercise-01-in-memory`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness

Lesson(.inMemory, program: .exercise).run(articleVariant)
