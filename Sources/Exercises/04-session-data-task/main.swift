/// Exercise 04: runs your Article.swift as `exercise-04-session-data-task`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness

Lesson(.sessionDataTask, program: .exercise).run(articleVariant)
